"""The dashboard's deployment (Cloud Run, from the Dockerfile): what is uploaded and the command run.

Cloud Build cannot be reached from here; the image's steps (copy, ``pip install .[dashboard]``, the
Streamlit command on $PORT) were run by hand from the upload set against the emulators (docs/deploy.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _shipped(path: Path) -> bool:
    return "__pycache__" not in path.parts and path.suffix != ".pyc" and path.is_file()


def test_the_upload_is_the_dockerfile_and_what_it_copies_and_nothing_else():
    if shutil.which("gcloud") is None:
        pytest.skip("the gcloud CLI is not installed")
    listed = subprocess.run(
        ["gcloud", "meta", "list-files-for-upload"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    uploaded = set(listed)
    needed = {"Dockerfile", "pyproject.toml", "README.md", ".streamlit/config.toml"}
    for folder in ("dashboard", "functions/factor_journal"):
        needed |= {p.relative_to(ROOT).as_posix() for p in (ROOT / folder).rglob("*") if _shipped(p)}
    assert needed <= uploaded, sorted(needed - uploaded)
    package_files = {f for f in uploaded if f.startswith("functions/factor_journal/")}
    stray = uploaded - needed - package_files - {".dockerignore"}
    assert not stray, sorted(stray)  # no local secrets, virtualenvs, node_modules, corpora or caches
    assert "functions/.secret.local" not in uploaded and not any(".venv" in f or "venv/" in f for f in uploaded)


def test_the_deploy_command_carries_the_region_secret_and_the_functions_settings(tmp_path):
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "deploy-dashboard.sh", tmp_path / "scripts")
    (tmp_path / "functions").mkdir()
    (tmp_path / "functions" / ".env").write_text("FJ_APP_URL=https://app.example\n# a comment\nOTHER=x\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "gcloud"  # records its arguments instead of calling Google Cloud
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$(dirname "$0")/args"\n')
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "GCLOUD_PROJECT": "acme-prod"}
    env.pop("FJ_REGION", None)
    subprocess.run(["bash", str(tmp_path / "scripts" / "deploy-dashboard.sh")], env=env, check=True)
    args = (bin_dir / "args").read_text().splitlines()
    assert args[:4] == ["run", "deploy", "factor-journal-app", "--source"]
    assert args[args.index("--region") + 1] == "europe-west1"
    assert args[args.index("--project") + 1] == "acme-prod"
    assert args[args.index("--set-secrets") + 1] == "FJ_LINK_SECRET=FJ_LINK_SECRET:latest"
    assert args[args.index("--set-env-vars") + 1] == "GCLOUD_PROJECT=acme-prod,FJ_APP_URL=https://app.example"


def test_the_deploy_refuses_without_a_project(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gcloud").write_text("#!/bin/sh\nexit 0\n")  # no configured project
    (bin_dir / "gcloud").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "GCLOUD_PROJECT"}
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    script = str(ROOT / "scripts" / "deploy-dashboard.sh")
    done = subprocess.run(["bash", script], env=env, capture_output=True, text=True)
    assert done.returncode == 2 and "GCLOUD_PROJECT" in done.stderr
