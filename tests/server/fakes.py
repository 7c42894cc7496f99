"""The scripted in-process host the server tests use (`fakepeer.server.scripted`)."""

from fakepeer.server.scripted import (
    CONTRACT,
    echo_identity,
    publication,
    register_body,
    steps_then_complete,
)
from fakepeer.server.scripted import (
    ScriptedLink as FakeLink,
)

__all__ = [
    "CONTRACT",
    "FakeLink",
    "echo_identity",
    "publication",
    "register_body",
    "steps_then_complete",
]
