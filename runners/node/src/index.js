// The Ryusen execution protocol 1.1 JavaScript SDK (docs/protocol.md).

export { RyusenError, errorToRecord } from './errors.js';
export { I64, U64, Instant, Duration, BlobRef, toTagged, fromTagged, fromTaggedText, canonicalValueBytes, f64Text } from './values.js';
export { toMillis, parseDuration } from './durations.js';
export * as json from './json.js';
export { JsonDocument } from './json.js';
export { Registry, MANIFEST_FORMAT } from './registry.js';
export { canonicalBytes, hashBytes, hashDocument, compareCodePoints } from './canonical.js';
export { WorkflowContext, isSuspended, isSuspensionSignal } from './context.js';
export { DecisionMachine } from './machine.js';
export { executeInvocation } from './invocation.js';
export { decodeEnvelope, encodeEnvelope, ProtocolFault, PROTOCOL_VERSION, KINDS } from './envelope.js';
export { Worker, Session, RegistrationRefused, CAPABILITIES, DEFAULT_SDK, VALUE_CODEC } from './worker.js';
export { FrameReader, FrameWriter, FramingError, MAX_FRAME_BYTES } from './framing.js';
