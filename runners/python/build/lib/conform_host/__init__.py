"""The conformance registry (§13) and host plumbing, written with the public SDK API."""
