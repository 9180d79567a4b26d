"""The files' room: the markdown report and a pull request's comment, CSV, plots, GitHub's job summary and
annotations, and the outputs a session writes (atomically, what each replaced said)."""
