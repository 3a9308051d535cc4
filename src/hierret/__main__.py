"""``python -m hierret``: the command line (:func:`hierret.cli.main`)."""

from hierret.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
