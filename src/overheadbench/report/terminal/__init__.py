"""The terminal's room: the session's summary at the end of a run, from the shared cells of :mod:`..report`."""
