"""Input that breaks parsers (issue 19): JSON bodies and JSON uploads nested deeper than JSON_MAX_DEPTH (400) or
larger than JSON_MAX_BODY_BYTES (413), NUL characters in URLs, query strings, bodies and uploads (400 naming the
field or file), UTF-16 and UTF-8-with-BOM files read like UTF-8. Never a 500; nothing stored on a refusal."""

from __future__ import annotations

import codecs
import io
import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from benchmarks_app.models import BenchmarkRun, MemoryLog
from sizing.kernel.json_limits import JSON_MAX_BODY_BYTES, JSON_MAX_DEPTH, json_depth_exceeds, loads, nul_path
from sizing.models import LlmModel, Membership, Organisation
from tests.benchmarks_app.vllm_files import vllm_file

TIMELINE = Path(__file__).resolve().parents[1] / "benchmarks_app" / "results" / "fixtures" / "timeline"
DEEP_927 = "[" * 927 + "]" * 927  # the issue's body: 1.9 KB, 927 levels


def _file(name: str, data: bytes) -> io.BytesIO:
    handle = io.BytesIO(data)
    handle.name = name
    return handle


@pytest.fixture
def sales_client(organisation: Organisation) -> APIClient:
    account = get_user_model().objects.create_user(username="seller", password="correct horse battery")
    Membership.objects.create(user=account, organisation=organisation, role=Membership.Role.SALES)
    client = APIClient()
    client.force_authenticate(user=account)
    return client


# --- the scanner and the helpers -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "deep_at"),
    [
        pytest.param("[" * 64 + "]" * 64, None, id="at-the-limit"),
        pytest.param("[" * 65 + "]" * 65, 64, id="one-over"),
        pytest.param('{"a": "' + "[" * 500 + '"}', None, id="brackets-in-a-string"),
        pytest.param('["\\"' + "[" * 500 + '"]', None, id="escaped-quote-in-a-string"),
        pytest.param('["\\\\", ' + "[" * 65, 70, id="escaped-backslash-then-a-cut-deep-list"),
        pytest.param("[1," * 100, 64 * 3, id="cut-file-counts-open-brackets"),
    ],
)
def test_the_depth_scan_counts_brackets_outside_strings(text: str, deep_at: int | None) -> None:
    assert json_depth_exceeds(text) == deep_at


def test_the_issue_body_is_refused_naming_the_limit_without_recursion() -> None:
    with pytest.raises(json.JSONDecodeError) as error:
        loads(DEEP_927)
    assert error.value.msg == f"nested deeper than {JSON_MAX_DEPTH} levels (the limit)"


def test_nul_path_names_the_key_or_index_iteratively() -> None:
    value: object = "x\x00"
    for _level in range(5000):  # deeper than any recursion would survive
        value = [value]
    assert nul_path({"a": [1, {"b": "ok", "c": "a\x00b"}]}) == "a[1].c"
    assert nul_path(value) == "[0]" * 5000
    assert nul_path({"ok": ["fine"]}) is None


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-be-bom", "utf-32"])
def test_loads_decodes_by_the_byte_order_mark(encoding: str) -> None:
    data = (
        codecs.BOM_UTF16_BE + '{"a": "é"}'.encode("utf-16-be")
        if encoding == "utf-16-be-bom"
        else '{"a": "é"}'.encode(encoding)
    )
    assert loads(data) == {"a": "é"}


# --- JSON bodies ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["/api/v1/estimates/", "/api/v1/deployments/", "/api/v1/quotes/", "/api/v1/fingerprints/parse"]
)
def test_a_deep_json_body_is_a_400_naming_the_limit(api_client: APIClient, catalog: None, url: str) -> None:
    response = api_client.post(url, DEEP_927, content_type="application/json")
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "json_too_deep"
    assert f"JSON_MAX_DEPTH is {JSON_MAX_DEPTH}" in body["message"]


def test_a_json_body_over_the_limit_is_a_413_naming_it_by_its_content_length(api_client: APIClient) -> None:
    # given: a body one byte over the limit
    body = '{"a": "' + "x" * (JSON_MAX_BODY_BYTES - 8) + '"}'
    assert len(body) == JSON_MAX_BODY_BYTES + 1
    # when
    response = api_client.post("/api/v1/estimates/", body, content_type="application/json")
    # then
    assert response.status_code == 413, response.content
    assert response.json()["code"] == "request_too_large"
    assert f"the limit is {JSON_MAX_BODY_BYTES:,} bytes (JSON_MAX_BODY_BYTES)" in response.json()["message"]


def test_a_json_body_without_a_content_length_is_read_no_further_than_the_limit(api_client: APIClient) -> None:
    # given: a 200 MB body would be parsed whole; a stream that counts what is read, with no Content-Length
    class Endless(io.RawIOBase):
        read_bytes = 0

        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:  # type: ignore[override]
            size = len(buffer)
            buffer[:size] = b" " * size
            Endless.read_bytes += size
            return size

    from sizing.kernel.request_limits import BodyTooLarge, LimitedJSONParser

    # when / then
    with pytest.raises(BodyTooLarge) as error:
        LimitedJSONParser().parse(io.BufferedReader(Endless()), parser_context={})
    assert "over 4,194,304" in str(error.value.detail)
    assert Endless.read_bytes <= JSON_MAX_BODY_BYTES + 2 * io.DEFAULT_BUFFER_SIZE


def test_a_nul_in_a_json_string_is_a_400_naming_the_field(api_client: APIClient, catalog: None) -> None:
    response = api_client.post(
        "/api/v1/deployments/", '{"name": "a\\u0000b", "customer": "x"}', content_type="application/json"
    )
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid_input"
    assert list(body["extra"]["fields"]) == ["name"]


# --- NUL in URLs ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/gpus/?vendor=a%00b",
        "/api/v1/gpus/?ordering=%00",
        "/api/v1/models/?search=a%00",
        "/api/v1/deployments/?customer=a%00b",
    ],
)
def test_a_nul_in_a_filter_or_ordering_is_a_400_naming_it_for_sales_too(
    sales_client: APIClient, catalog: None, url: str
) -> None:
    response = sales_client.get(url)
    assert response.status_code == 400, response.content
    body = response.json()
    name = url.split("?")[1].split("=")[0]
    assert body["code"] == "invalid_input"
    assert list(body["extra"]["fields"]) == [name]


@pytest.fixture
def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/benchmarks/?model=a%00b", "model"),
        ("/customers/a%00b/", "path"),
        ("/deployments/?customer=%00", "customer"),
        ("/api/v1/gpus/a%00b/", "path"),
    ],
)
def test_a_nul_in_a_page_url_is_a_400_page(signed_in: Client, url: str, field: str) -> None:
    response = signed_in.get(url)
    assert response.status_code == 400
    if url.startswith("/api/"):
        assert list(response.json()["extra"]["fields"]) == [field]
    else:
        assert f"{field} holds a NUL character" in response.content.decode()


def test_a_nul_in_a_form_field_is_a_400(signed_in: Client) -> None:
    response = signed_in.post("/workloads/", "name=a%00b", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400
    assert "name holds a NUL character" in response.content.decode()


# --- uploads -------------------------------------------------------------------------------------------------------


def test_a_deep_config_upload_is_a_400_naming_the_limit(api_client: APIClient, catalog: None) -> None:
    response = api_client.post(
        "/api/v1/models/",
        {"slug": "me/deep", "config_file": _file("config.json", DEEP_927.encode())},
        format="multipart",
    )
    assert response.status_code == 400, response.content
    assert f"JSON_MAX_DEPTH is {JSON_MAX_DEPTH}" in response.json()["message"]
    assert not LlmModel.objects.filter(slug="me/deep").exists()


def test_a_config_upload_with_a_nul_is_a_400_naming_the_key(api_client: APIClient, catalog: None) -> None:
    config = b'{"model_type": "llama", "name": "a\\u0000b"}'
    response = api_client.post(
        "/api/v1/models/", {"slug": "me/nul", "config_file": _file("config.json", config)}, format="multipart"
    )
    assert response.status_code == 400, response.content
    assert "name holds a NUL character" in response.json()["message"]
    assert not LlmModel.objects.filter(slug="me/nul").exists()


def test_a_6_mb_deeply_nested_benchmark_file_is_refused_naming_the_limit(api_client: APIClient, catalog: None) -> None:
    # given: 6 MB of {"benchmarks": [{"a": [... , a GuideLLM-looking file cut deep (its salvage walked every level)
    deep = ('{"benchmarks": [' + '{"a": [1, ' * 600_000).encode()
    assert len(deep) > 6_000_000
    # when
    response = api_client.post("/api/v1/benchmark-runs/", {"file": _file("deep.json", deep)}, format="multipart")
    # then
    assert response.status_code == 400, response.content
    assert f"nested deeper than {JSON_MAX_DEPTH} levels (the limit, JSON_MAX_DEPTH)" in response.json()["message"]
    assert not BenchmarkRun.objects.exists()


@pytest.mark.parametrize(
    ("name", "data"),
    [
        pytest.param("bench.json", b'{"a": "x"}' + b"\n" * 5000 + b'{"b": "\x00"}', id="nul-after-the-sniffed-head"),
        pytest.param("bench.json", vllm_file(4).replace(b'"openai"', b'"open\\u0000ai"', 1), id="escaped-nul-in-json"),
    ],
)
def test_a_benchmark_file_with_a_nul_is_a_400_naming_the_file(
    api_client: APIClient, catalog: None, name: str, data: bytes
) -> None:
    response = api_client.post("/api/v1/benchmark-runs/", {"file": _file(name, data)}, format="multipart")
    assert response.status_code == 400, response.content
    assert response.json()["message"].startswith(f"{name}: ")
    assert not BenchmarkRun.objects.exists()


def test_a_memory_log_with_a_nul_is_a_400_naming_the_file(api_client: APIClient) -> None:
    data = (TIMELINE / "healthy_2gpu_72h.csv").read_bytes()
    data = data[:10_000] + b"\x00" + data[10_000:]
    response = api_client.post("/api/v1/memory-logs/", {"file": _file("gpu.csv", data)}, format="multipart")
    assert response.status_code == 400, response.content
    assert response.json()["message"] == "gpu.csv: binary content (not a text result file)"
    assert not MemoryLog.objects.exists()


def test_a_workload_csv_with_a_nul_is_a_400(api_client: APIClient) -> None:
    data = b"timestamp,input_tokens,output_tokens\n2026-01-01T00:00:00Z,100,20\x00\n"
    response = api_client.post(
        "/api/v1/workloads/import", {"name": "nul", "file": _file("log.csv", data)}, format="multipart"
    )
    assert response.status_code == 400, response.content
    assert "NUL character" in response.json()["message"]


# --- UTF-16 and UTF-8 with a BOM -----------------------------------------------------------------------------------

ENCODINGS = [
    pytest.param("utf-8-sig", id="utf-8-bom"),
    pytest.param("utf-16", id="utf-16-bom"),
    pytest.param("utf-16-be-bom", id="utf-16-be-bom"),
]


def _encoded(text: str, encoding: str) -> bytes:
    if encoding == "utf-16-be-bom":
        return codecs.BOM_UTF16_BE + text.encode("utf-16-be")
    return text.encode(encoding)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_benchmark_file_in_utf_16_or_with_a_bom_imports_like_utf_8(
    api_client: APIClient, catalog: None, django_capture_on_commit_callbacks, encoding: str
) -> None:
    # given: the same vLLM file as UTF-8 and re-encoded
    text = vllm_file(40, failed_every=10).decode("utf-8")
    with django_capture_on_commit_callbacks(execute=True):
        plain = api_client.post("/api/v1/benchmark-runs/", {"file": _file("a.json", text.encode())}, format="multipart")
        other = api_client.post(
            "/api/v1/benchmark-runs/", {"file": _file("b.json", _encoded(text, encoding))}, format="multipart"
        )
    # then
    assert plain.status_code == 201, plain.content
    assert other.status_code == 201, other.content
    keys = ("tool", "completed", "failed", "request_count", "metrics")
    assert [{k: run[k] for k in keys} for run in other.json()] == [{k: run[k] for k in keys} for run in plain.json()]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_memory_log_in_utf_16_or_with_a_bom_reads_like_utf_8(api_client: APIClient, encoding: str) -> None:
    text = (TIMELINE / "healthy_2gpu_72h.csv").read_text()
    plain = api_client.post("/api/v1/memory-logs/", {"file": _file("a.csv", text.encode())}, format="multipart")
    other = api_client.post(
        "/api/v1/memory-logs/", {"file": _file("b.csv", _encoded(text, encoding))}, format="multipart"
    )
    assert plain.status_code == 201, plain.content
    assert other.status_code == 201, other.content
    assert other.json()["analysis"] == plain.json()["analysis"]
    assert other.json()["verdict"] == plain.json()["verdict"]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_config_upload_in_utf_16_or_with_a_bom_reads_like_utf_8(
    api_client: APIClient, catalog: None, encoding: str
) -> None:
    config = json.dumps(LlmModel.objects.get(slug="meta-llama/Meta-Llama-3-8B", organisation=None).config)
    response = api_client.post(
        "/api/v1/models/",
        {"slug": "me/bom", "config_file": _file("config.json", _encoded(config, encoding))},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    assert LlmModel.objects.get(slug="me/bom").config == json.loads(config)


@pytest.mark.django_db
def test_an_id_beyond_the_database_integers_is_a_404_not_a_500(api_client) -> None:
    # given a report id of 22 digits (schemathesis found it: 7796364861855605194752 overflowed the query into a 500)
    response = api_client.get("/api/v1/reports/7796364861855605194752/versions/510127/pdf")
    # then no URL takes it: a JSON 404
    assert response.status_code == 404
    assert response.json()["code"]
