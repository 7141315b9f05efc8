#!/usr/bin/env python3
"""The oauth suite's checks on a run's JTL and summary: the time to the first acknowledged sample, how fast a bad
input fails, the long run's token refreshes, and what samples show while the token endpoint is down.

Usage: checks.py CHECK ARG...   (run.sh calls each; CHECK is a function below, with dashes)
Prints what it saw; exits 1 with the reason at the first mismatch.
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
import jtl  # noqa: E402


def start(r):
    """When JMeter started the sample (epoch ms)."""
    return int(r["timeStamp"])


def end(r):
    """When the sample ended (epoch ms)."""
    return int(r["timeStamp"]) + int(r["elapsed"])


def first_ok_after(results, started_ms):
    """Prints the milliseconds from STARTED_MS (JMeter's start) to the end of the first successful sample, or an
    empty line when none succeeded."""
    ok = [end(r) for r in jtl.rows(results) if r["success"] == "true"]
    print(min(ok) - int(started_ms) if ok else "")


def failed_within(results, seconds):
    """Every sample (the failed ones of a bad input) ended within SECONDS."""
    slowest = max(int(r["elapsed"]) for r in jtl.rows(results))
    assert slowest <= int(seconds) * 1000, f"the failure took {slowest} ms"
    print(f"failed after {slowest} ms")


def refreshed(summary, run_seconds):
    """The long run with 60-s tokens: a refresh at least every 48 s (librdkafka refreshes at 80 % of the lifetime),
    none failed, and one token per round for both producers (a retry may add one)."""
    o = jtl.summary(summary)["oauth"]
    assert o["refreshes"] >= int(run_seconds) // 48 and o["refresh_failures"] == 0, o
    assert o["tokens_fetched"] <= o["refreshes"] + 2, o
    print("long run:", o)


def extensions_seen(broker_log, marker, tokens):
    """The broker (stack/kafka/oauth/ExtensionsCheck.java) logged the SASL extensions holding MARKER with at least
    TOKENS different tokens (told apart by their expiry): each (re-)authentication brought them."""
    expiries = set()
    with open(broker_log, errors="replace") as f:
        for line in f:
            if "SASL extensions of " in line and marker in line:
                expiries.add(line.split("(token expiring ", 1)[1].split(")", 1)[0])
    assert len(expiries) >= int(tokens), f"{marker} seen with {len(expiries)} token(s) in {broker_log}"
    print(f"{marker}: with {len(expiries)} tokens")


def outage_seen(results, summary, url, first, stopped, restarted):
    """The token endpoint down from STOPPED to RESTARTED (epoch ms; FIRST: the first token's fetch, 15-s tokens):
    while the token lives every sample succeeds; after its expiry samples fail with TOKEN_ERROR naming the expiry,
    URL and the refused connection, and only within the outage (librdkafka retries every 10 s and reconnects within
    its backoff, so within 16 s of the restart a new token is in use); afterwards they succeed again; the summary
    counts the failed refreshes."""
    rows = jtl.rows(results)
    first, stopped, restarted = int(first), int(stopped), int(restarted)
    # the token's exp claim is 15 s after its fetch (a second earlier at worst); librdkafka's refresh at 12 s fails
    alive = [r for r in rows if stopped <= start(r) and end(r) < first + 13000]
    assert len(alive) >= 20 and all(r["success"] == "true" for r in alive), \
        [r["responseMessage"] for r in alive if r["success"] != "true"][:3]
    failed = [r for r in rows if r["success"] != "true"]
    assert failed, "no sample failed while the token endpoint was down and the token had expired"
    for r in failed:
        m = r["responseMessage"]
        assert r["responseCode"] == "TOKEN_ERROR" and "the OAuth token expired" in m and url in m and \
            "connection refused" in m.lower(), (r["responseCode"], m)
    assert all(first + 13000 <= end(r) and start(r) <= restarted + 16000 for r in failed), \
        "a sample failed outside the outage"
    after = [r for r in rows if start(r) > restarted + 16000]
    assert len(after) >= 20 and all(r["success"] == "true" for r in after), \
        (len(after), [r["responseMessage"] for r in after if r["success"] != "true"][:3])
    o = jtl.summary(summary)["oauth"]
    assert o["refresh_failures"] >= 1 and o["refreshes"] >= 1, o
    print(f"{len(alive)} samples ok with the endpoint down and the token alive, {len(failed)} failed after its "
          f"expiry, e.g.: {failed[0]['responseMessage']}")
    print(f"{len(after)} ok after the restart; summary: {o}")


if __name__ == "__main__":
    jtl.run_checks({f.__name__: f for f in (first_ok_after, failed_within, refreshed, extensions_seen, outage_seen)}, "oauth")
