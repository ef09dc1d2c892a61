"""The whole command line, every command registered: `app`, for code that drives it
in-process (tests with typer's CliRunner). The `judge` process registers only the command
it runs (`app.app_for`, called by startup.main).
"""

from judgecli.cli.app import whole_app

app = whole_app()

__all__ = ["app"]
