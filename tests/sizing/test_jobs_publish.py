"""sizing/kernel/jobs.py: a job the broker refuses is marked failed and answered 503 (and any other error is left alone);
the reaper that beat runs ends every kind of job nobody will finish, failed with the reason and what it had done,
without anyone reading it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.test import RequestFactory
from django.utils import timezone
from kombu.exceptions import OperationalError

from benchmarks_app.models import BenchmarkRequest, BenchmarkRun, Endpoint, LoadTest, LoadTestShard
from benchmarks_app.models.memory_health import MemoryHealthReport
from deploy.celery import app as celery_app
from reports.models import Report, ReportVersion
from sizing.kernel.jobs import (
    JobQueueUnavailable,
    JobQueueUnavailableMiddleware,
    job_publish,
    job_publish_on_commit,
    jobs_reap,
)
from sizing.models import Deployment, Estimate, Gpu, LlmModel, SimulationJob
from sizing.tasks import jobs_reap_task

MODEL = "meta-llama/Meta-Llama-3-8B"


def _refuse(error: BaseException):
    def publish(*_args: object) -> None:
        raise error

    return publish


# ---------------------------------------------------------------------------------------------------------------
# Publishing


@pytest.mark.parametrize(
    "error",
    [OperationalError("Error 111 connecting to 10.1.2.3:6379"), FileNotFoundError("/var/broker/out")],
    ids=["redis down", "folder gone"],
)
def test_a_refused_publish_marks_the_job_failed_and_raises_queue_unavailable(error) -> None:
    # given
    failed = []
    # when
    with pytest.raises(JobQueueUnavailable) as raised:
        job_publish(kind="estimate", job_id=7, publish=_refuse(error), fail=failed.append)
    # then: the stored error and the 503's body are the same, and name no host
    assert failed == [raised.value.as_dict()]
    assert failed[0] == {
        "code": "job_queue_unavailable",
        "message": "the job queue is unavailable, so the job was not started (it is marked failed); try again in 30 s",
        "extra": {"retry_after_s": 30, "job": {"kind": "estimate", "id": 7}},
    }


def test_an_error_that_is_not_the_brokers_is_left_alone() -> None:
    failed = []
    with pytest.raises(ValueError, match="a defect"):
        job_publish(kind="estimate", job_id=7, publish=_refuse(ValueError("a defect")), fail=failed.append)
    assert failed == []


def test_publishing_waits_for_the_commit(db, django_capture_on_commit_callbacks) -> None:
    # given
    published = []
    # when
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job_publish_on_commit(kind="estimate", job_id=1, publish=lambda: published.append(1), fail=print)
    # then: nothing sent until the transaction commits
    assert published == []
    assert len(callbacks) == 1
    callbacks[0]()
    assert published == [1]


def test_an_estimate_the_broker_refuses_is_failed_with_the_reason(
    api_client, catalog, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    # given a broker that refuses
    monkeypatch.setattr("sizing.tasks.estimate_compute_task.delay", _refuse(OperationalError("refused")))
    # when
    with pytest.raises(JobQueueUnavailable), django_capture_on_commit_callbacks(execute=True):
        api_client.post("/api/v1/estimates/", {"model": MODEL, "gpu": "nvidia-l40s-48gb"}, format="json")
    # then
    estimate = Estimate.objects.get()
    assert (estimate.status, estimate.error["code"]) == ("failed", "job_queue_unavailable")
    assert estimate.finished_at is not None


@pytest.mark.parametrize(
    ("path", "accept", "content_type"),
    [
        ("/api/v1/estimates/", "", "application/json"),
        ("/sizing/", "application/json", "application/json"),
        ("/sizing/", "text/html", "text/html; charset=utf-8"),
    ],
    ids=["api", "page asking for json", "page"],
)
def test_the_middleware_answers_503_with_retry_after(path, accept, content_type) -> None:
    # given
    request = RequestFactory().post(path, HTTP_ACCEPT=accept)
    middleware = JobQueueUnavailableMiddleware(lambda request: None)
    # when
    response = middleware.process_exception(request, JobQueueUnavailable(kind="quote", job_id=3))
    # then
    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    assert response["Content-Type"] == content_type
    assert b"the job queue is unavailable" in response.content
    assert middleware.process_exception(request, ValueError("other")) is None


# ---------------------------------------------------------------------------------------------------------------
# The reaper


def test_beat_runs_both_reapers_and_they_are_registered() -> None:
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert tasks == {"sizing.tasks.jobs_reap_task", "benchmarks_app.tasks.loadtest_reap_task"}
    celery_app.loader.import_default_modules()  # what a worker does at start: autodiscover every app's tasks
    assert tasks <= set(celery_app.tasks)


def _age(model, pk: int, **fields) -> None:
    model.objects.filter(pk=pk).update(**fields)


def test_the_reaper_ends_every_kind_of_job_nobody_will_finish_and_leaves_fresh_ones(catalog, organisation) -> None:
    # given: of each kind, one stuck past its time and one fresh
    now = timezone.now()
    queued_long = now - timedelta(seconds=settings.JOB_QUEUE_TIMEOUT_S + 1)
    forever = now - timedelta(days=3)
    model = LlmModel.objects.get(slug=MODEL, organisation__isnull=True)
    gpu = Gpu.objects.get(slug="nvidia-l4-24gb")
    estimates = [Estimate.objects.create(organisation=organisation, model=model, gpu=gpu, inputs={}) for _ in range(3)]
    _age(Estimate, estimates[0].pk, created_at=queued_long)
    _age(Estimate, estimates[1].pk, created_at=forever, status=Estimate.Status.RUNNING)
    jobs = [SimulationJob.objects.create(organisation=organisation, kind="simulate", inputs={}) for _ in range(3)]
    _age(SimulationJob, jobs[0].pk, created_at=queued_long)
    _age(
        SimulationJob,
        jobs[1].pk,
        status=SimulationJob.Status.RUNNING,
        started_at=forever,
        progress=0.4,
        progress_message="candidate 12/30",
    )
    runs = [
        BenchmarkRun.objects.create(
            organisation=organisation,
            name="r",
            format="vllm",
            tool="vllm",
            status=BenchmarkRun.Status.IMPORTING,
            progress_message="1,000 of 4,000 requests stored",
        )
        for _ in range(2)
    ]
    _age(BenchmarkRun, runs[0].pk, created_at=forever)
    deployment = Deployment.objects.create(
        organisation=organisation, name="d", engine="vllm", gpu_count=1, tp=1, model=model, gpu=gpu
    )
    report = Report.objects.create(organisation=organisation, deployment=deployment, title="r")
    version = ReportVersion.objects.create(
        report=report,
        number=1,
        status=ReportVersion.Status.APPROVED,
        content={},
        progress_message="rendering the PDF",
        sign_requested_at=forever,
    )
    drafting = ReportVersion.objects.create(
        report=report,
        number=2,
        content={},
        draft_requested_at=forever,
        progress_message="queued: gathering the evidence",
    )
    fresh_draft = ReportVersion.objects.create(report=report, number=3, content={}, draft_requested_at=now)
    health = [
        MemoryHealthReport.objects.create(
            organisation=organisation,
            deployment=deployment,
            file_name="s",
            file_size_bytes=1,
            file_sha256="0" * 64,
            file_gz=b"",
            host="h",
            watched_from=now,
            watched_to=now,
        )
        for _ in range(3)
    ]
    _age(MemoryHealthReport, health[0].pk, created_at=queued_long)
    _age(MemoryHealthReport, health[1].pk, created_at=forever, status=MemoryHealthReport.Status.RUNNING)

    # when: beat's task, as a worker runs it (nobody reads a job)
    ended = jobs_reap_task.apply().get()

    # then
    assert ended == {
        "estimates": 2,
        "simulations": 2,
        "benchmark_imports": 1,
        "report_signing": 1,
        "report_drafting": 1,
        "health_reports": 2,
        "load_tests": 0,
    }
    statuses = [Estimate.objects.get(pk=e.pk).status for e in estimates]
    assert statuses == ["failed", "failed", "pending"]
    assert "no worker took this estimate" in Estimate.objects.get(pk=estimates[0].pk).error["message"]
    assert [SimulationJob.objects.get(pk=j.pk).status for j in jobs] == ["failed", "failed", "queued"]
    running = SimulationJob.objects.get(pk=jobs[1].pk)
    assert running.error["code"] == "job_lost"
    assert running.error["extra"]["progress_message"] == "candidate 12/30"  # what it had done
    assert running.progress == 0.4
    assert [BenchmarkRun.objects.get(pk=r.pk).status for r in runs] == ["failed", "importing"]
    assert BenchmarkRun.objects.get(pk=runs[0].pk).error["extra"]["stored"] == "1,000 of 4,000 requests stored"
    version.refresh_from_db()
    assert (version.status, version.progress_message, version.error["code"]) == ("approved", "", "job_lost")
    drafting.refresh_from_db()
    fresh_draft.refresh_from_db()
    assert (drafting.status, drafting.error["code"], fresh_draft.error) == ("draft", "job_lost", None)
    assert [MemoryHealthReport.objects.get(pk=h.pk).status for h in health] == ["failed", "failed", "queued"]
    # and a second pass finds nothing left
    assert jobs_reap() == dict.fromkeys(ended, 0)


def test_beats_reaper_fails_a_load_test_whose_worker_is_gone_without_anyone_reading_it(
    api_client, organisation
) -> None:
    # given: a test whose shard's worker stopped beating, 30 requests measured
    endpoint = Endpoint.objects.create(
        organisation=organisation,
        name="sim",
        base_url="http://127.0.0.1:9",
        kind=Endpoint.Kind.SIMULATOR,
        model_name=MODEL,
    )
    response = api_client.post(
        "/api/v1/load-tests/", {"endpoint": endpoint.pk, "scenario": "pulse", "peak_concurrency": 8}, format="json"
    )
    assert response.status_code == 202, response.content
    job = LoadTest.objects.get()
    long_ago = timezone.now() - timedelta(seconds=settings.LOADTEST_HEARTBEAT_TIMEOUT_S + 5)
    LoadTest.objects.filter(pk=job.pk).update(status=LoadTest.Status.RUNNING, started_at=long_ago)
    LoadTestShard.objects.filter(job=job).update(
        status=LoadTestShard.Status.RUNNING, heartbeat_at=long_ago, worker="loadtests@box-7"
    )
    BenchmarkRequest.objects.bulk_create(
        [
            BenchmarkRequest(
                run_id=job.run_id,
                index=i,
                status="ok",
                start_s=i * 0.1,
                ttft_ms=100.0 + i,
                e2e_ms=500.0,
                tpot_ms=10.0,
                input_tokens=512,
                output_tokens=40,
            )
            for i in range(30)
        ]
    )

    # when: only beat's task runs
    ended = jobs_reap_task.apply().get()

    # then
    assert ended["load_tests"] == 1
    job.refresh_from_db()
    assert job.status == "failed"
    assert "loadtests@box-7" in job.error["message"]
    run = BenchmarkRun.objects.get(pk=job.run_id)
    assert (run.status, run.completed, run.request_count) == ("failed", 30, 30)
