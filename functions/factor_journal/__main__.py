import sys

from factor_journal.cli import main

sys.exit(main())
