from judgecli.cli import app

app()
