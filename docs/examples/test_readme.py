import json
from collections import deque

import pytest


def handle(message: dict) -> str:  # the bare path: what your agent does
    return json.dumps({"reply": message["text"].upper()})


def with_retry(call, attempts=3):  # the framework path: a retry layer around it
    def wrapped(message):
        for attempt in range(attempts):
            try:
                return call(message)
            except ConnectionError:
                if attempt == attempts - 1:
                    raise

    return wrapped


def with_audit(call):  # an audit layer: keeps the last 100 messages, serialised
    log = deque(maxlen=100)

    def wrapped(message):
        log.append(json.dumps(message))
        return call(message)

    return wrapped


@pytest.mark.overhead(max=0.25)  # the retry layer may make a call at most 25% slower
def test_retry_overhead(overhead):
    message, retried = {"text": "hello"}, with_retry(handle)
    overhead.compare(baseline=lambda: handle(message), framework=lambda: retried(message))


@pytest.mark.overhead(max=0.25)  # the audit layer costs more than that: this test fails, to show a failure
def test_audit_overhead(overhead):
    message, audited = {"text": "hello"}, with_audit(handle)
    overhead.compare(baseline=lambda: handle(message), framework=lambda: audited(message))
