"""Images end to end (issue 32, item 3): cases whose input, output or turns show images,
graded through the real CLI and real LiteLLM against the simulator. The images reach the
judge as image parts inside their fields' fences, as data URLs of the files' bytes; the
reply cache follows those bytes; a judge that cannot see is refused before any call; the
report shows thumbnails; the simulator replays known labels of image cases."""

from __future__ import annotations

import base64
import json
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from judgecli.simulator.server import SimulatorConfig, SimulatorServer
from tests.integration.conftest import REPO, write_jsonl

DATASET = REPO / "datasets" / "images.jsonl"
IMAGES = REPO / "datasets" / "images"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def image_urls(request) -> list[str]:
    user = next(m for m in request.body["messages"] if m["role"] == "user")
    content = user["content"]
    if isinstance(content, str):
        return []
    return [p["image_url"]["url"] for p in content if p["type"] == "image_url"]


def decoded(url: str) -> bytes:
    head, _, payload = url.partition(",")
    assert head == "data:image/png;base64"
    return base64.b64decode(payload)


def files_named(value: Any) -> list[str]:
    """The image files a case field names, in order."""
    if not isinstance(value, list):
        return []
    return [p["image_url"]["url"] for p in value if p["type"] == "image_url"]


@pytest.fixture
def images_copy(tmp_path: Path) -> Path:
    """datasets/images.jsonl and its images, copied where a test may change them."""
    shutil.copytree(IMAGES, tmp_path / "data" / "images")
    return Path(shutil.copy(DATASET, tmp_path / "data" / "images.jsonl"))


def score(run_cli, server, dataset: Path, out: str, *extra: str):
    args = ["score", str(dataset), "--rubric", "helpfulness", "--out", out, "--json", "--quiet"]
    return run_cli(server, *args, *extra)


def texts_of(value: Any) -> list[str]:
    """The texts of a case field (a string, or content parts)."""
    if isinstance(value, str):
        return [value]
    return [p["text"] for p in value if p["type"] == "text"]


def test_each_image_reaches_the_judge_inside_its_fields_fence_as_its_files_bytes(
    run_cli, judge_server
):
    cases = read_jsonl(DATASET)
    run = score(run_cli, judge_server, DATASET, "run")
    assert run.exit_code == 0, run.stderr
    assert run.summary["n_ok"] == len(cases)
    assert len(judge_server.requests) == len(cases)
    asked = set()
    for request in judge_server.requests:
        parts = next(m for m in request.body["messages"] if m["role"] == "user")["content"]
        prompt = "".join(p.get("text", "") for p in parts)
        # Which case: the one all of whose texts the prompt shows (each case's differ).
        [case] = [
            c
            for c in cases
            if all(t in prompt for t in texts_of(c["input"]) + texts_of(c["output"]))
        ]
        asked.add(case["id"])
        named = files_named(case["input"]) + files_named(case["output"])
        sent = [decoded(url) for url in image_urls(request)]
        assert sent == [(DATASET.parent / name).read_bytes() for name in named]
        # Each image sits inside the fence of its field: the text before it opened it.
        fields = []
        for i, part in enumerate(parts):
            if part["type"] == "image_url":
                before = "".join(p.get("text", "") for p in parts[:i])
                field = "output" if "<output>" in before else "input"
                assert before.rfind(f"<{field}>") > before.rfind(f"</{field}>")
                fields.append(field)
        assert fields == ["input"] * len(files_named(case["input"])) + ["output"] * len(
            files_named(case["output"])
        )
    assert asked == {c["id"] for c in cases}
    results = {r["id"]: r for r in read_jsonl(Path("run") / "results.jsonl")}
    first = results["img-01"]
    assert first["case"]["input"] == (
        "What shape is in this picture, and what colour is it?\n[image 1]"
    )
    [image] = first["images"]
    assert image["file"] == "images/red-square.png"
    assert decoded(image["url"]) == (IMAGES / "red-square.png").read_bytes()
    assert [(i["field"], i["image"]) for i in results["img-08"]["images"]] == [
        ("input", 1),
        ("input", 2),
    ]
    assert results["img-06"]["case"]["output"] == "[image 1]"
    # The cases table shows each image once, as a thumbnail of its bytes.
    page = (Path("run") / "report.html").read_text(encoding="utf-8")
    table = page[page.index('<table id="cases">') :]
    shown = sum(len(files_named(c["input"]) + files_named(c["output"])) for c in cases)
    assert table.count('<img src="data:image/png;base64,') == shown


def test_the_reply_cache_follows_the_images_bytes_not_its_files_name(
    run_cli, judge_server, images_copy
):
    assert score(run_cli, judge_server, images_copy, "first").exit_code == 0
    assert len(judge_server.requests) == 8
    judge_server.reset()
    # Another file with the same bytes: the same request, answered from the cache.
    folder = images_copy.parent / "images"
    shutil.copy(folder / "red-square.png", folder / "renamed.png")
    text = images_copy.read_text(encoding="utf-8").replace("red-square.png", "renamed.png")
    images_copy.write_text(text, encoding="utf-8")
    again = score(run_cli, judge_server, images_copy, "again")
    assert again.exit_code == 0, again.stderr
    assert judge_server.requests == []
    assert again.summary["usage"]["cached"] == 8
    # The same file name with other bytes: only the cases that show it are asked again.
    (folder / "blue-circle.png").write_bytes((folder / "bar-chart.png").read_bytes())
    changed = score(run_cli, judge_server, images_copy, "changed")
    assert changed.exit_code == 0, changed.stderr
    shows_circle = [
        c["id"] for c in read_jsonl(images_copy) if "images/blue-circle.png" in json.dumps(c)
    ]
    assert sorted(shows_circle) == ["img-02", "img-08"]
    assert len(judge_server.requests) == len(shows_circle)
    assert changed.summary["usage"]["cached"] == 8 - len(shows_circle)


def test_a_judge_litellm_knows_cannot_see_is_refused_before_any_call(run_cli, judge_server):
    run = score(run_cli, None, DATASET, "run", "--model", "gpt-3.5-turbo")
    assert run.exit_code == 2
    assert "error: 8 cases show images (the first: " in run.stderr
    assert "images.jsonl:1), and LiteLLM's model map says gpt-3.5-turbo cannot see" in run.stderr
    assert "hint: judge them with a vision model" in run.stderr
    assert "Traceback" not in run.stderr
    assert not Path("run").exists()
    # A text-only selection needs no vision judge: --limit picks none with an image.
    text_only = write_jsonl(Path("text.jsonl"), [{"id": "t", "input": "Hi", "output": "Hello"}])
    assert score(run_cli, judge_server, text_only, "text", "--model", "openai/sim").exit_code == 0


def test_a_missing_image_is_exit_2_naming_file_line_and_nothing_is_written(
    run_cli, judge_server, images_copy
):
    rows = read_jsonl(images_copy)
    rows[2]["input"][1]["image_url"]["url"] = "images/nope.png"
    write_jsonl(images_copy, rows)
    run = score(run_cli, judge_server, images_copy, "run")
    assert run.exit_code == 2
    assert f'error: {images_copy}:3: "input"[1]: image file images/nope.png not found' in run.stderr
    assert "hint: a relative path is read from the dataset's folder" in run.stderr
    assert judge_server.requests == []
    assert not Path("run").exists()


def test_a_conversation_shows_its_turns_images_inside_the_conversation_fence(run_cli, judge_server):
    square = str(IMAGES / "red-square.png")
    case = {
        "id": "chat-1",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What shape is this?"},
                    {"type": "image_url", "image_url": {"url": square}},
                ],
            },
            {"role": "assistant", "content": "A red square."},
        ],
    }
    dataset = write_jsonl(Path("chat.jsonl"), [case])
    args = ["score", str(dataset), "--rubric", "conversation", "--out", "run", "--json"]
    run = run_cli(judge_server, *args)
    assert run.exit_code == 0, run.stderr
    [request] = judge_server.requests
    parts = next(m for m in request.body["messages"] if m["role"] == "user")["content"]
    at = next(i for i, p in enumerate(parts) if p["type"] == "image_url")
    before = "".join(p["text"] for p in parts[:at])
    assert before.endswith("<conversation>\n<user>\nWhat shape is this?\n")
    assert decoded(parts[at]["image_url"]["url"]) == (IMAGES / "red-square.png").read_bytes()


def test_pairwise_shows_both_answers_images_in_both_orders(run_cli, judge_server):
    circle, triangle = str(IMAGES / "blue-circle.png"), str(IMAGES / "green-triangle.png")

    def answer(path: str) -> dict:
        return {
            "id": "d-1",
            "input": "Draw a blue circle.",
            "output": [{"type": "image_url", "image_url": {"url": path}}],
        }

    old = write_jsonl(Path("old.jsonl"), [answer(triangle)])
    new = write_jsonl(Path("new.jsonl"), [answer(circle)])
    args = ["pairwise", str(old), str(new), "--rubric", "pairwise", "--out", "run", "--json"]
    run = run_cli(judge_server, *args)
    assert run.exit_code == 0, run.stderr
    orders = sorted(
        tuple(decoded(u) for u in image_urls(request)) for request in judge_server.requests
    )
    circle_bytes, triangle_bytes = Path(circle).read_bytes(), Path(triangle).read_bytes()
    assert orders == sorted([(circle_bytes, triangle_bytes), (triangle_bytes, circle_bytes)])


def test_the_simulator_replays_the_known_labels_of_image_cases(run_cli):
    labels = {c["id"]: c["label"] for c in read_jsonl(DATASET)}
    with SimulatorServer(SimulatorConfig(truth_file=DATASET, noise=0.0)) as server:
        run = score(run_cli, server, DATASET, "run")
    assert run.exit_code == 0, run.stderr
    scores = {r["id"]: r["score"] for r in read_jsonl(Path("run") / "results.jsonl")}
    assert scores == labels


def test_the_arena_refuses_a_blind_judge_of_image_answers_and_shows_the_images_to_a_seeing_one(
    run_cli, judge_server
):
    shapes = ["red-square.png", "blue-circle.png", "green-triangle.png"]
    files = []
    for name in shapes:
        row = {
            "id": "d-1",
            "input": "Draw a shape.",
            "output": [{"type": "image_url", "image_url": {"url": str(IMAGES / name)}}],
        }
        files.append(str(write_jsonl(Path(f"{name}.jsonl"), [row])))
    args = ["arena", *files, "--rubric", "pairwise", "--out", "run", "--json"]
    blind = run_cli(None, *args, "--model", "o3-mini")
    assert blind.exit_code == 2
    assert "o3-mini cannot see images" in blind.stderr
    assert not Path("run").exists()
    run = run_cli(judge_server, *args)
    assert run.exit_code == 0, run.stderr
    assert judge_server.requests
    for request in judge_server.requests:
        assert len(image_urls(request)) == 2


def test_the_python_api_checks_a_cases_images_as_a_run_does(judge_server, monkeypatch):
    from judgecli import Judge
    from judgecli.errors import ConfigError

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    case = {
        "input": [
            {"type": "text", "text": "What shape is this?"},
            {"type": "image_url", "image_url": {"url": str(IMAGES / "red-square.png")}},
        ],
        "output": "A red square.",
    }
    with (
        Judge(rubric="helpfulness", model="gpt-3.5-turbo") as blind,
        pytest.raises(ConfigError, match="gpt-3.5-turbo cannot see images"),
    ):
        blind.grade(case)
    sim = {"model": "openai/sim", "api_base": f"{judge_server.url}/v1"}
    with Judge(rubric="helpfulness", **sim) as judge:
        verdict = judge.grade(case)
    assert verdict.score is not None
    [request] = judge_server.requests
    assert [decoded(u) for u in image_urls(request)] == [(IMAGES / "red-square.png").read_bytes()]


PAGE = REPO / "docs" / "images.md"
SAID = re.compile(r"^(error|hint): |^\d+ of \d+ cases graded")
# The page's two simulators: the plain one, and the one that replays the labels.
PORTS = {"8765": SimulatorConfig(), "8766": SimulatorConfig(truth_file=DATASET, noise=0.0)}


def documented_runs() -> list[tuple[list[str], list[str]]]:
    """Each `$ judge score ...` of docs/images.md: its words after `judge`, and the lines the
    page shows under it that a run says (its summary line, or its error and hint).
    """
    runs = []
    pieces = re.split(r"^```.*$", PAGE.read_text(encoding="utf-8"), flags=re.M)[1::2]
    for block in pieces:
        lines = block.replace("\\\n", " ").splitlines()
        for n, line in enumerate(lines):
            if line.startswith("$ judge score "):
                shown = [s for s in lines[n + 1 :] if SAID.match(s)]
                runs.append((shlex.split(line)[2:], shown))
    return runs


def test_the_pages_commands_print_what_it_shows(run_cli, monkeypatch):
    # Issue 32: docs/images.md's examples run as written, against the page's simulators.
    runs = documented_runs()
    assert len(runs) == 3
    for n, (words, said) in enumerate(runs):
        assert said, words
        here = Path(f"page-{n}").resolve()
        here.mkdir()
        (here / "datasets").symlink_to(REPO / "datasets")
        monkeypatch.chdir(here)
        base = next((w for w in words if w.startswith("http://127.0.0.1:")), None)
        if base is None:
            run = run_cli(None, *words)
        else:
            port = base.split(":")[2].split("/")[0]
            with SimulatorServer(PORTS[port]) as server:
                run = run_cli(None, *[w.replace(base, f"{server.url}/v1") for w in words])
        printed = (run.stdout + run.stderr).splitlines()
        for line in said:
            assert line in printed, (line, printed)
        assert run.exit_code == (2 if said[0].startswith("error:") else 0), run.stderr
