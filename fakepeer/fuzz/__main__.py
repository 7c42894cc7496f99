"""`python -m fakepeer.fuzz [fuzz] --sdk CMD ...`: the same command as `ryusen-conform fuzz`."""

import sys

from fakepeer.fuzz.cli import standalone_app
from fakepeer.transport import close_all


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["fuzz"]:  # accept the spelling of the mounted command too
        args = args[1:]
    try:
        standalone_app()(args=args, prog_name="python -m fakepeer.fuzz")
    finally:
        close_all()


if __name__ == "__main__":
    main()
