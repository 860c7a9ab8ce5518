"""The image, compose and Kubernetes files: parsed, and the structure that matters asserted; the entrypoint's
dispatch and `manage.py wait_for_db` run for real."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
ENTRYPOINT = DEPLOY / "entrypoint.sh"
APP_DIRS = ("deploy", "sizing", "benchmarks_app", "reports", "frontend")
# names that code reads from the environment but that are not settings of the service
# names the test run alone reads or sets (deploy/settings/test.py: one var dir per pytest-xdist process)
NOT_SETTINGS = {"DJANGO_ALLOW_ASYNC_UNSAFE", "PYTHONPATH", "PYTEST_XDIST_WORKER", "SIZING_TEST_VAR_DIR"}


def _k8s_documents() -> dict[str, list[dict]]:
    return {
        path.name: [doc for doc in yaml.safe_load_all(path.read_text()) if doc] for path in sorted(K8S.glob("*.yaml"))
    }


def _objects(kind: str) -> dict[str, dict]:
    return {doc["metadata"]["name"]: doc for docs in _k8s_documents().values() for doc in docs if doc["kind"] == kind}


def _compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def _settings_read_from_environment() -> set[str]:
    """Every name read with env.<type>("NAME"), environ.Env().<type>("NAME") or os.environ/os.getenv("NAME")."""
    pattern = re.compile(
        r"""(?:\benv|Env\(\))\.(?:str|int|bool|float|list|tuple|dict|json|db|db_url|cache|cache_url|url|path|"""
        r"""email|email_url|search_url|decimal|bytes|parse_value)\(\s*["']([A-Z][A-Z0-9_]*)["']"""
        r"""|os\.environ(?:\.get|\.setdefault)?[\[(]\s*["']([A-Z][A-Z0-9_]*)["']"""
        r"""|os\.getenv\(\s*["']([A-Z][A-Z0-9_]*)["']"""
    )
    names: set[str] = set()
    for directory in APP_DIRS:
        for path in (ROOT / directory).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for match in pattern.finditer(path.read_text(encoding="utf-8")):
                names.add(next(group for group in match.groups() if group))
    return names - NOT_SETTINGS


def _entrypoint_variables() -> set[str]:
    return set(re.findall(r"\$\{([A-Z][A-Z0-9_]*)(?::-|-|\})", ENTRYPOINT.read_text())) - {"HOSTNAME"}


def _documented() -> set[str]:
    text = (DEPLOY / ".env.example").read_text()
    return set(re.findall(r"^#?\s?([A-Z][A-Z0-9_]*)=", text, flags=re.MULTILINE))


# ---- .env.example ----------------------------------------------------------------------------------------------


def test_the_scan_finds_the_settings() -> None:
    names = _settings_read_from_environment()
    assert {
        "SECRET_KEY",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "ALLOWED_HOSTS",
        "SECURE_SSL_REDIRECT",
        "SIZING_VAR_DIR",
        "REPORTS_SIGNING_P12",
        "SIZING_SECRETS_KEY_FALLBACKS",
    } <= names


def test_every_setting_read_from_the_environment_is_in_env_example() -> None:
    missing = sorted(_settings_read_from_environment() - _documented())
    assert not missing, f"read from the environment but not documented in deploy/.env.example: {missing}"


def test_every_entrypoint_variable_is_in_env_example() -> None:
    missing = sorted(_entrypoint_variables() - _documented())
    assert not missing, f"deploy/entrypoint.sh reads these, deploy/.env.example does not list them: {missing}"


def test_env_example_keeps_secrets_empty_and_production_defaults_secure() -> None:
    values = dict(re.findall(r"^([A-Z][A-Z0-9_]*)=(.*)$", (DEPLOY / ".env.example").read_text(), re.MULTILINE))
    assert values["SECRET_KEY"] == ""
    assert values.get("SIZING_SECRETS_KEY", "") == ""
    for name in ("SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "DEBUG"):
        assert name not in values, f"{name} must stay commented out (the secure default) in .env.example"


# ---- Dockerfile and packages -----------------------------------------------------------------------------------


def _apt_packages() -> list[str]:
    lines = (DEPLOY / "apt-packages.txt").read_text().splitlines()
    return [line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()]


def test_runtime_packages_are_package_names() -> None:
    packages = _apt_packages()
    for package in packages:
        assert re.fullmatch(r"[a-z0-9][a-z0-9+.-]+", package), package
    assert {"fonts-noto-cjk", "libpango-1.0-0", "libpangoft2-1.0-0", "fontconfig"} <= set(packages)
    assert "chromium" not in packages  # browser tests only


def test_dockerfile_shape() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    stages = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\w+))?", text, flags=re.MULTILINE)
    assert [name for _, name in stages] == ["build", "runtime"]
    assert re.search(r"^ARG PYTHON_IMAGE=python:3\.11-slim-bookworm$", text, flags=re.MULTILINE)
    assert all(image == "${PYTHON_IMAGE}" for image, _ in stages)
    assert "deploy/apt-packages.txt" in text
    assert "uv sync --locked --no-dev" in text  # the image installs what uv.lock pins, as make install does
    assert "COPY pyproject.toml uv.lock" in text
    assert "compile_translations" in text
    assert "collectstatic --noinput" in text
    assert re.search(r"^USER 10001(:10001)?$", text, flags=re.MULTILINE)
    assert "SIZING_VAR_DIR=/var/lib/sizing" in text
    assert "HEALTHCHECK" in text
    assert "/healthz" in text
    assert 'ENTRYPOINT ["/app/deploy/entrypoint.sh"]' in text
    assert 'CMD ["web"]' in text
    # the build-time secrets exist only inside one RUN, never as ENV of the image
    env_lines = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert not re.search(r"^ENV[^\n]*SECRET_KEY", env_lines, flags=re.MULTILINE)


def test_the_image_and_make_use_the_same_uv() -> None:
    makefile = re.search(r"^UV_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), flags=re.MULTILINE)
    dockerfile = re.search(r"^ARG UV_VERSION=(\S+)$", (DEPLOY / "Dockerfile").read_text(), flags=re.MULTILINE)
    assert makefile
    assert dockerfile
    assert makefile.group(1) == dockerfile.group(1)


def test_dockerignore_keeps_local_state_out() -> None:
    entries = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".venv", "var", ".git", "**/__pycache__", "node_modules", ".env"} <= entries


# ---- entrypoint ------------------------------------------------------------------------------------------------


def test_entrypoint_is_valid_bash_and_executable() -> None:
    subprocess.run(["bash", "-n", str(ENTRYPOINT)], check=True)
    assert os.access(ENTRYPOINT, os.X_OK)
    assert "set -euo pipefail" in ENTRYPOINT.read_text()


def _run_entrypoint(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Runs the entrypoint with stub python/gunicorn/celery first on PATH: each prints its command line."""
    stubs = tmp_path / "bin"
    stubs.mkdir(exist_ok=True)
    for name in ("python", "gunicorn", "celery"):
        stub = stubs / name
        stub.write_text(f'#!/bin/sh\necho "{name} $*"\n')
        stub.chmod(0o755)
    environment = {
        "PATH": f"{stubs}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "SIZING_VAR_DIR": str(tmp_path / "var"),
        **env,
    }
    return subprocess.run(
        ["bash", str(ENTRYPOINT), *args], capture_output=True, text=True, env=environment, timeout=30, check=False
    )


def test_entrypoint_execs_an_unknown_command(tmp_path: Path) -> None:
    done = _run_entrypoint(tmp_path, "true", MIGRATE_ON_START="0", SKIP_WAIT_FOR_DB="1")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    failed = _run_entrypoint(tmp_path, "false", MIGRATE_ON_START="0", SKIP_WAIT_FOR_DB="1")
    assert failed.returncode == 1
    echoed = _run_entrypoint(tmp_path, "echo", "a b", "c", SKIP_WAIT_FOR_DB="1")
    assert echoed.stdout == "a b c\n"


def test_entrypoint_web_waits_for_the_database_then_starts_gunicorn(tmp_path: Path) -> None:
    done = _run_entrypoint(tmp_path, "web", GUNICORN_WORKERS="3", GUNICORN_THREADS="2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("python manage.py wait_for_db --timeout ")
    assert "migrate" not in done.stdout  # only with MIGRATE_ON_START=1
    gunicorn = lines[-1]
    assert gunicorn.startswith("gunicorn deploy.wsgi:application ")
    for flag in ("--bind 0.0.0.0:8000", "--workers 3", "--threads 2", "--timeout 120", "--access-logfile -"):
        assert flag in gunicorn


def test_entrypoint_default_workers_are_capped(tmp_path: Path) -> None:
    done = _run_entrypoint(tmp_path, "web", SKIP_WAIT_FOR_DB="1", GUNICORN_MAX_WORKERS="1")
    assert "--workers 1 " in done.stdout


def test_entrypoint_migrates_only_when_asked(tmp_path: Path) -> None:
    done = _run_entrypoint(tmp_path, "worker", MIGRATE_ON_START="1", SKIP_WAIT_FOR_DB="1")
    assert done.stdout.splitlines()[:2] == ["python manage.py migrate --noinput", "python manage.py catalog_load"]
    migrate = _run_entrypoint(tmp_path, "migrate", SKIP_WAIT_FOR_DB="1")
    assert migrate.stdout.splitlines() == ["python manage.py migrate --noinput", "python manage.py catalog_load"]


def test_entrypoint_worker_roles(tmp_path: Path) -> None:
    worker = _run_entrypoint(tmp_path, "worker", SKIP_WAIT_FOR_DB="1").stdout
    assert (
        "celery -A deploy worker --queues=estimates,simulations,quotes,imports,reports,celery --pool=threads "
        "--concurrency=4"
    ) in worker
    loadtests = _run_entrypoint(tmp_path, "loadtest-worker", SKIP_WAIT_FOR_DB="1").stdout
    assert "--queues=loadtests" in loadtests
    assert "--hostname loadtests@%h" in loadtests
    beat = _run_entrypoint(tmp_path, "beat", SKIP_WAIT_FOR_DB="1").stdout
    assert f"celery -A deploy beat --schedule={tmp_path / 'var'}/celerybeat-schedule" in beat
    manage = _run_entrypoint(tmp_path, "manage", "check", "--deploy").stdout
    assert manage == "python manage.py check --deploy\n"  # no database wait for manage commands


def test_entrypoint_empties_the_metrics_directory(tmp_path: Path) -> None:
    metrics = tmp_path / "prometheus"
    metrics.mkdir()
    (metrics / "counter_123.db").write_bytes(b"stale")
    done = _run_entrypoint(tmp_path, "web", SKIP_WAIT_FOR_DB="1", PROMETHEUS_MULTIPROC_DIR=str(metrics))
    assert done.returncode == 0, done.stderr
    assert metrics.is_dir()
    assert not list(metrics.iterdir())


# ---- compose ---------------------------------------------------------------------------------------------------


def test_compose_services_and_order() -> None:
    compose = _compose()
    assert "version" not in compose
    services = compose["services"]
    assert set(services) == {"postgres", "redis", "migrate", "web", "worker", "loadtest-worker", "beat"}
    assert services["postgres"]["image"].startswith("postgres:16")
    assert services["redis"]["image"].startswith("redis:7")
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    assert services["redis"]["healthcheck"]["test"][-1] == "ping"
    assert services["migrate"]["command"] == ["migrate"]
    for name in ("web", "worker", "loadtest-worker", "beat"):
        service = services[name]
        assert service["depends_on"]["migrate"]["condition"] == "service_completed_successfully", name
        assert service["command"] == [name]
    for name in ("migrate", "web", "worker", "loadtest-worker", "beat"):
        service = services[name]
        assert service["env_file"] == ".env", name
        environment = service["environment"]
        assert "@postgres:5432/" in environment["DATABASE_URL"]
        assert environment["CELERY_BROKER_URL"].startswith("redis://redis:6379/")
        assert environment["CACHE_URL"].startswith("redis://redis:6379/")
        assert "sizing-var:/var/lib/sizing" in service["volumes"]
    assert "/readyz" in " ".join(services["web"]["healthcheck"]["test"])
    assert "8000" in services["web"]["ports"][0]
    assert services["loadtest-worker"]["deploy"]["replicas"] == 2
    assert {"postgres-data", "redis-data", "sizing-var"} <= set(compose["volumes"])


# `docker compose config` is not run here: the test machines have the Docker CLI without its compose plugin (and
# Debian's docker-compose 1.29 predates the top-level `name`); the structure above is what the file must hold.


# ---- Kubernetes ------------------------------------------------------------------------------------------------


def test_kustomization_lists_every_manifest_but_the_example_secret() -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert kustomization["namespace"] == "llm-sizing"
    manifests = {path.name for path in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization["resources"]) == manifests - {"secret.example.yaml"}
    assert (K8S / "secret.example.yaml").exists()


def test_every_manifest_parses_and_has_kind() -> None:
    documents = _k8s_documents()
    assert documents
    for name, docs in documents.items():
        for doc in docs:
            assert doc.get("apiVersion"), name
            assert doc.get("kind"), name


def _pod_specs() -> dict[str, dict]:
    specs = {name: doc["spec"]["template"]["spec"] for name, doc in _objects("Deployment").items()}
    specs.update({f"job/{name}": doc["spec"]["template"]["spec"] for name, doc in _objects("Job").items()})
    return specs


def test_deployments_exist_with_their_roles() -> None:
    deployments = _objects("Deployment")
    assert set(deployments) == {"web", "worker", "loadtest-worker", "beat"}
    for name, deployment in deployments.items():
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        assert container["args"] == [name]
    assert deployments["web"]["spec"]["replicas"] == 2


def test_every_container_is_bounded_and_unprivileged() -> None:
    for name, spec in _pod_specs().items():
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        assert spec["securityContext"]["runAsUser"] == 10001, name
        mounts_by_volume = {volume["name"]: volume for volume in spec["volumes"]}
        for container in spec["containers"]:
            resources = container["resources"]
            assert {"cpu", "memory"} <= set(resources["requests"]), name
            assert {"cpu", "memory"} <= set(resources["limits"]), name
            security = container["securityContext"]
            assert security["allowPrivilegeEscalation"] is False, name
            assert security["readOnlyRootFilesystem"] is True, name
            tmp = [mount for mount in container["volumeMounts"] if mount["mountPath"] == "/tmp"]  # noqa: S108
            assert tmp, name
            assert "emptyDir" in mounts_by_volume[tmp[0]["name"]], name
            sources = {ref.get("configMapRef", ref.get("secretRef"))["name"] for ref in container["envFrom"]}
            assert sources == {"sizing-config", "sizing-env"}, name


def test_web_probes() -> None:
    (container,) = _objects("Deployment")["web"]["spec"]["template"]["spec"]["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["startupProbe"]["httpGet"]["path"] == "/healthz"


def test_beat_is_a_single_recreated_replica() -> None:
    beat = _objects("Deployment")["beat"]
    assert beat["spec"]["replicas"] == 1
    assert beat["spec"]["strategy"]["type"] == "Recreate"


def test_hpa_scales_the_loadtest_workers() -> None:
    (hpa,) = _objects("HorizontalPodAutoscaler").values()
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "loadtest-worker"}
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (1, 10)
    assert hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"


def test_the_job_migrates() -> None:
    job = _objects("Job")["migrate"]
    assert job["spec"]["backoffLimit"] >= 1
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["args"] == ["migrate"]
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"


def test_secret_template_and_signing_mount() -> None:
    docs = [doc for doc in yaml.safe_load_all((K8S / "secret.example.yaml").read_text()) if doc]
    secrets = {doc["metadata"]["name"]: doc for doc in docs}
    assert {"SECRET_KEY", "DATABASE_URL", "SIZING_SECRETS_KEY", "REPORTS_SIGNING_PASSPHRASE"} <= set(
        secrets["sizing-env"]["stringData"]
    )
    assert all("CHANGE-ME" in value for value in secrets["sizing-env"]["stringData"].values())
    assert "signing.p12" in secrets["sizing-signing"]["data"]
    config = _objects("ConfigMap")["sizing-config"]["data"]
    assert config["REPORTS_SIGNING_P12"] == "/etc/sizing/signing.p12"
    for name, spec in _pod_specs().items():
        if name.startswith("job/"):
            continue
        (container,) = spec["containers"]
        assert any(mount["mountPath"] == "/etc/sizing" for mount in container["volumeMounts"]), name


def test_service_ingress_and_volume() -> None:
    assert _objects("Service")["web"]["spec"]["selector"]["app.kubernetes.io/component"] == "web"
    ingress = _objects("Ingress")["web"]
    assert ingress["spec"]["tls"][0]["secretName"]
    assert _objects("PersistentVolumeClaim")["sizing-var"]["spec"]["accessModes"] == ["ReadWriteMany"]
    assert _objects("Namespace").keys() == {"llm-sizing"}


# ---- wait_for_db -----------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_wait_for_db_succeeds_against_the_test_database(capsys: pytest.CaptureFixture[str]) -> None:
    call_command("wait_for_db", "--timeout", "5")
    assert "is ready" in capsys.readouterr().out


def test_wait_for_db_fails_within_its_timeout_when_unreachable() -> None:
    environment = {
        **os.environ,
        "DATABASE_URL": "postgres://postgres@127.0.0.1:1/none",
        "DJANGO_SETTINGS_MODULE": "deploy.settings.test",
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "wait_for_db", "--timeout", "2", "--interval", "0.5"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 1
    assert "not reachable after 2 s" in done.stderr
    assert "127.0.0.1:1/none" in done.stderr


# ---- the two commands ------------------------------------------------------------------------------------------


def test_a_management_command_prints_no_library_log_lines() -> None:
    # given the embedded defaults' settings in a fresh process (as make run's steps start)
    environment = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    # when
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # then: the check's one line, and no INFO banner (django-axes printed "AXES: BEGIN version ..." on every command)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "System check identified no issues (0 silenced)."
    assert done.stderr == ""


def test_the_system_packages_script_names_the_command_to_run_when_it_cannot_install(tmp_path: Path) -> None:
    # given a package list with a package that is not installed, and no root (a stand-in `id` answers 1000)
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "id").write_text("#!/bin/sh\necho 1000\n")
    (fake_bin / "id").chmod(0o755)
    script = ROOT / "deploy" / "tools" / "system-packages.sh"
    assert os.access(script, os.X_OK)
    lists = {path.name for path in (ROOT / "deploy").glob("apt-packages*.txt")}
    assert lists == {"apt-packages.txt", "apt-packages-test.txt"}
    test_packages = {
        line.split("#")[0].strip() for line in (ROOT / "deploy" / "apt-packages-test.txt").read_text().splitlines()
    } - {""}
    assert {"chromium", "poppler-utils"} <= test_packages
    # when: run with a dpkg-query that knows no package
    (fake_bin / "dpkg-query").write_text("#!/bin/sh\nexit 1\n")
    (fake_bin / "dpkg-query").chmod(0o755)
    path = f"{fake_bin}:{os.environ['PATH']}"
    done = subprocess.run(
        ["bash", str(script), "--test"],
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    # then: it stops at once, with one line naming the exact command
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "apt-get install -y --no-install-recommends" in lines[0]
    assert "chromium" in lines[0]
    assert "fonts-noto-cjk" in lines[0]
