"""Start the app with what every first page view needs already loaded: ``python -m dashboard.serve [options]``.

``streamlit run dashboard/app.py`` imports the app's modules (Streamlit's elements, plotly, pandas, the domain
package, the Firestore client) on the first view after the server starts, under the loading skeleton: that first
person waited seconds for what every later one gets at once.  This launcher imports them, loads the catalog and
opens the Firestore client first, then runs ``streamlit run dashboard/app.py`` with the given options in this same
process (the imports stay loaded).  The Dockerfile, ``make demo``, the browser tests and the pages bench start the
app with it.
"""

from __future__ import annotations

import sys
from pathlib import Path

APP = Path(__file__).resolve().with_name("app.py")


def warm() -> None:
    """Import the app's modules and open the store (the catalog loaded, the client made), once per process."""
    sys.path.insert(0, str(APP.parents[1]))
    import dashboard.charts  # noqa: F401  (plotly, pandas: the team and history pages)
    import dashboard.context  # noqa: F401  (the domain package, the access checks)
    import dashboard.views.ask_why  # noqa: F401
    import dashboard.views.capabilities  # noqa: F401
    import dashboard.views.conversation  # noqa: F401
    import dashboard.views.history  # noqa: F401
    import dashboard.views.manager  # noqa: F401
    import dashboard.views.review  # noqa: F401
    import dashboard.views.where_are_we  # noqa: F401
    from factor_journal import runtime

    runtime.store()


def main(argv: list[str] | None = None) -> None:
    from streamlit.web import cli

    warm()
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
