"""Reading CSV request logs: header aliases, delimiters, timestamps and their hours, and errors that name the row
(as a spreadsheet numbers it, the header being row 1) and the column. Pure: no database."""

from __future__ import annotations

import pytest

from sizing.estimator.errors import SizingError
from sizing.estimator.workload_csv import MAX_CLASSES, MAX_REPORTED_ERRORS, workload_log_parse


def _errors(text: str) -> list[str]:
    with pytest.raises(SizingError) as caught:
        workload_log_parse(text=text)
    return caught.value.extra["fields"]["file"]


@pytest.mark.parametrize(
    "header",
    [
        "timestamp,input_tokens,output_tokens,class",
        "Time,Prompt Tokens,Completion-Tokens,Request_Type",
        "created_at,input_len,output_len,category",
        "\ufeffTS,num_prompt_tokens,generated_tokens,label",
    ],
    ids=["canonical", "spaces and hyphens", "lengths", "byte-order mark"],
)
def test_header_aliases_are_read_case_insensitively(header):
    # when
    parsed = workload_log_parse(text=f"{header}\n2024-05-01T09:00:00,100,10,chat\n2024-05-01T09:00:01,200,20,chat\n")
    # then
    assert [(r.input_tokens, r.output_tokens, r.request_class, r.hour) for r in parsed.requests] == [
        (100, 10, "chat", 9),
        (200, 20, "chat", 9),
    ]
    assert list(parsed.columns) == ["timestamp", "input_tokens", "output_tokens", "class"]


@pytest.mark.parametrize("delimiter", [",", ";", "\t"], ids=["comma", "semicolon", "tab"])
def test_the_delimiter_is_read_from_the_header(delimiter):
    # given
    rows = [["timestamp", "input_tokens", "output_tokens"], ["1714554000", "7", "3"], ["1714554060", "9", "5"]]
    # when
    parsed = workload_log_parse(text="\n".join(delimiter.join(row) for row in rows))
    # then
    assert [r.input_tokens for r in parsed.requests] == [7, 9]


def test_timestamps_and_their_hours():
    # given: local time with an offset (hour as written), naive ISO, epoch seconds (UTC), epoch milliseconds
    text = (
        "timestamp,input_tokens,output_tokens\n"
        "2024-05-01T10:15:00+08:00,1,1\n"
        "2024-05-01 23:59:59,1,1\n"
        "1714554000,1,1\n"
        "1714554000500,1,1\n"
        "2024-05-01T02:15:00Z,1,1\n"
    )
    # when
    requests = workload_log_parse(text=text).requests
    # then: 10:15 +08:00 is 02:15 UTC = 1714529700 s; 1714554000 s is 09:00 UTC
    assert [r.hour for r in requests] == [10, 23, 9, 9, 2]
    assert [r.timestamp_s for r in requests] == [1714529700.0, 1714607999.0, 1714554000.0, 1714554000.5, 1714529700.0]


def test_whole_numbers_may_be_written_as_floats_and_blank_lines_are_skipped():
    # when
    parsed = workload_log_parse(text="\n\ntimestamp,input_tokens,output_tokens\n1,100.0,1e2\n\n2,0,5\n\n")
    # then
    assert [(r.input_tokens, r.output_tokens) for r in parsed.requests] == [(100, 100), (0, 5)]


def test_rows_keep_their_spreadsheet_numbers_after_blank_lines_before_the_header():
    # given two blank lines: the header is row 3, the bad row row 5
    assert _errors("\n\ntimestamp,input_tokens,output_tokens\n1,1,1\n2,x,1\n") == [
        "row 5: input_tokens 'x' is not a whole number"
    ]


def test_a_short_row_names_the_missing_cell():
    assert _errors("timestamp,input_tokens,output_tokens\n1,1,1\n2,3\n") == ["row 3: output_tokens is empty"]


def test_errors_stop_after_the_first_twenty():
    # given a thousand bad rows
    text = "timestamp,input_tokens,output_tokens\n" + "".join(f"{i},x,1\n" for i in range(1000))
    # when
    messages = _errors(text)
    # then
    assert len(messages) == MAX_REPORTED_ERRORS
    assert messages[0] == "row 2: input_tokens 'x' is not a whole number"
    assert messages[-1] == "row 21: input_tokens 'x' is not a whole number"


def test_a_column_of_ids_is_not_taken_for_classes():
    # given 51 different class values
    text = "timestamp,input_tokens,output_tokens,class\n" + "".join(f"{i},1,1,user{i}\n" for i in range(51))
    # then
    assert _errors(text) == [
        f"the class column has 51 different values; a profile takes at most {MAX_CLASSES} "
        "classes (is it a column of ids?)"
    ]


def test_an_epoch_figure_out_of_range_is_named():
    assert _errors("timestamp,input_tokens,output_tokens\n1e300,1,1\n2,1,1\n") == [
        "row 2: timestamp '1e300' is out of range for Unix epoch seconds"
    ]
