"""The sentinel file read and judged without Django: refusals name the problem (a cut file, a foreign file, a
file with no end, too short, samples going back in time); a steady synthetic 72 hours passes every criterion, a
slow climb fails on the climb alone, an OOM line fails on the OOM, a file without the injected failure fails on it."""

from __future__ import annotations

import json

import pytest

from benchmarks_app.results.sentinel import (
    BreakerRule,
    RefusalCode,
    SentinelRefusal,
    evaluate,
    overlaps,
    parse_sentinel,
    sample_file_text,
)
from tests.sentinel.conftest import synthetic


def _refusal(text: str) -> SentinelRefusal:
    with pytest.raises(SentinelRefusal) as caught:
        parse_sentinel(text)
    return caught.value


def test_a_small_well_formed_file_is_read():
    # given one GPU sampled every 10 s for 36 s
    text = sample_file_text(hours=0.01, interval_s=10)
    # when
    sentinel = parse_sentinel(text)
    # then
    assert (sentinel.host, sentinel.gpu_uuids, sentinel.interval_s) == ("gpu-01", ("GPU-0000",), 10)
    assert [s.time_s - sentinel.start_s for s in sentinel.gpu_samples] == [0, 10, 20, 30]
    assert sentinel.gpu_samples[0].gpus[0].used_bytes == 70_000 * 2**20


@pytest.mark.parametrize(
    ("text", "code", "words"),
    [
        ("", RefusalCode.EMPTY, "empty"),
        (
            "timestamp, index, memory.used [MiB]\n2026/11/30 13:41:02.123, 0, 71000 MiB\n",
            RefusalCode.FOREIGN_FILE,
            "nvidia-smi log",
        ),
        ('{"tool": "guidellm", "type": "header"}\n', RefusalCode.FOREIGN_FILE, "not a memory-sentinel file"),
        (sample_file_text(hours=0.01, interval_s=10)[:-30], RefusalCode.TRUNCATED, "last line (line 6) is incomplete"),
        (
            "".join(sample_file_text(hours=0.01, interval_s=10).splitlines(keepends=True)[:-1]),
            RefusalCode.TRUNCATED,
            "no end line",
        ),
        (sample_file_text(hours=0.0, interval_s=10), RefusalCode.TOO_SHORT, "1 GPU sample(s)"),
    ],
    ids=["empty", "nvidia-smi-csv", "other-tool", "partial-last-line", "no-end", "one-sample"],
)
def test_files_that_cannot_be_imported_are_refused_naming_the_problem(text, code, words):
    # when
    refusal = _refusal(text)
    # then
    assert refusal.code == code
    assert words in refusal.message


def test_samples_that_go_back_in_time_are_an_overlap():
    # given a file whose third sample repeats the second's time (two runs written into one file)
    lines = sample_file_text(hours=0.01, interval_s=10).splitlines()
    repeated = json.loads(lines[3])
    lines.insert(4, json.dumps(repeated))
    # when
    refusal = _refusal("\n".join(lines) + "\n")
    # then
    assert refusal.code == RefusalCode.OVERLAP
    assert "line 5: a sample at 20.000 s is not after the one before it (20.000 s)" in refusal.message


def test_overlap_of_two_imports_needs_a_gpu_and_a_time_in_common():
    assert overlaps(uuids=["A", "B"], start_s=0, end_s=10, other_uuids=["B"], other_start_s=5, other_end_s=20)
    assert not overlaps(uuids=["A"], start_s=0, end_s=10, other_uuids=["B"], other_start_s=5, other_end_s=20)
    assert not overlaps(uuids=["A"], start_s=0, end_s=10, other_uuids=["A"], other_start_s=10, other_end_s=20)


# the signed commitment's peak per GPU the synthetic machine is held to (its cards peak at 71,900 MiB steady, 74,780
# MiB after 72 h of a 40 MiB/h climb)
COMMITTED = 76_000 * 2**20


def _verdicts(text: str, **options) -> dict[str, str]:
    options.setdefault("committed_bytes_per_gpu", COMMITTED)
    result = evaluate(parse_sentinel(text), breaker=BreakerRule(), **options)
    return {c.code.value: ("pass" if c.passed else "fail") for c in result.criteria}


def test_a_steady_72_hours_passes_every_criterion():
    # given the synthetic 72 hours: steady memory, one injected failure (90 s down), one breaker episode
    sentinel = parse_sentinel(synthetic(climb_mib_per_h=0.0))
    # when
    result = evaluate(sentinel, breaker=BreakerRule(), committed_bytes_per_gpu=COMMITTED)
    # then
    assert result.verdict == "pass"
    assert [c.code.value for c in result.criteria] == [
        "coverage",
        "no_oom",
        "no_sustained_climb",
        "breaker_response",
        "failure_recovered",
        "peak_within_commitment",
    ]
    assert result.coverage_hours == 72.0
    breaker = result.criteria[3].evidence
    assert (breaker["slowest_trip_s"], breaker["slowest_recovery_s"], breaker["trip_within_s"]) == (5.5, 8.0, 7.0)
    failure = result.criteria[4].evidence
    assert (failure["outages_total"], failure["slowest_recovery_s"]) == (1, 90.0)


def test_a_slow_climb_fails_on_the_climb_alone():
    # given 40 MiB/h: from 71,900 MiB the committed 76,000 MiB is reached in about 30 h after the 72 (≤ 720 h)
    verdicts = _verdicts(synthetic(climb_mib_per_h=40.0))
    # then
    assert verdicts == {
        "coverage": "pass",
        "no_oom": "pass",
        "no_sustained_climb": "fail",
        "breaker_response": "pass",
        "failure_recovered": "pass",
        "peak_within_commitment": "pass",
    }


@pytest.mark.parametrize(
    ("committed_mib", "expected"),
    [(None, "fail"), (71_900, "pass"), (71_899, "pass"), (71_898, "fail"), (60_000, "fail")],
)
def test_the_peak_is_held_to_the_signed_commitment_within_the_gauges_step(committed_mib, expected):
    # given the steady machine (peak 71,900 MiB on a card), held to a commitment or to none
    committed = None if committed_mib is None else committed_mib * 2**20
    # when
    verdicts = _verdicts(synthetic(climb_mib_per_h=0.0), committed_bytes_per_gpu=committed)
    # then: equal or one MiB under passes (the gauge reads whole MiB); two MiB under, or no commitment, fails
    assert verdicts["peak_within_commitment"] == expected


def test_an_oom_line_and_a_missing_failure_injection_fail_their_criteria():
    verdicts = _verdicts(synthetic(oom_at_h=12.0, failure=False))
    assert verdicts["no_oom"] == "fail"
    assert verdicts["failure_recovered"] == "fail"
    assert verdicts["no_sustained_climb"] == "pass"


def test_a_short_watch_fails_coverage():
    verdicts = _verdicts(synthetic(hours=30.0, failure=False, breaker=False))
    assert verdicts["coverage"] == "fail"
    assert verdicts["breaker_response"] == "pass"  # never above 95 %: not needed
