import sys

from generator.cli import main

if __name__ == "__main__":  # not when a spawned process (kvtriage serve's builder) imports it
    sys.exit(main())
