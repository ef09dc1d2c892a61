"""Before the first call: what LiteLLM can tell about each judge without the network.

A missing API key, a provider LiteLLM does not know, or a budget without a price are found
here, before a run directory is made or a request sent (exit 2 naming the fix). What only
the endpoint can tell (a wrong key, a wrong URL, nothing listening) is the circuit
breaker's (breaker.py), on the first call. LiteLLM comes in through judge.import_litellm,
which keeps it offline and quiet.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import logging
import os
import sys
import warnings
import weakref
from types import ModuleType

from judgecli.errors import ConfigError
from judgecli.gc_pause import gc_paused
from judgecli.inputs.images import ImagesShown
from judgecli.settings.judges import ModelSettings, Price


def import_litellm() -> ModuleType:
    """Import LiteLLM offline and quiet (docs/ecosystem.md, "Importing LiteLLM offline and
    quiet").
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch of the price map
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")  # no implicit .env loading
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # token_counter must not download tokenizers
    if "litellm" not in sys.modules:
        # Without collections, the import takes ~2.3 s rather than ~2.8 (gc_pause.py).
        with gc_paused():
            import litellm
    import litellm

    litellm.suppress_debug_info = True  # it otherwise print()s to stdout on every error
    litellm.drop_params = False  # fail loudly rather than silently drop a parameter
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    # litellm.acompletion builds the provider coroutine in a thread (run_in_executor); a call
    # cancelled meanwhile (Ctrl-C, --max-cost stop) leaves that coroutine unawaited, and
    # Python would print a RuntimeWarning about it at exit. Nothing was sent; nothing is lost.
    warnings.filterwarnings(
        "ignore", message=r"coroutine '.*acompletion' was never awaited", category=RuntimeWarning
    )
    # LiteLLM's afile_content (batch results) leaves one such coroutine behind on every
    # download, though the download itself completes (docs/ecosystem.md, "Provider batch APIs").
    warnings.filterwarnings(
        "ignore", message=r"coroutine '.*afile_content' was never awaited", category=RuntimeWarning
    )
    return litellm


# What LiteLLM imports on its first call, whatever the route: its logging's proxy types
# (~65 ms), and tiktoken's encoding (~125 ms), which its own HTTP handler loads.
FIRST_CALL_IMPORTS = (
    "litellm.proxy.openai_files_endpoints.common_utils",
    "litellm.litellm_core_utils.default_encoding",
)


def warm_up(*, sdk: bool = True) -> None:
    """Import what the first call would otherwise import mid-flight, which every call
    started with it waited for and counted as latency: the OpenAI client loads its resource
    modules (~0.4-1.2 s) on first use, LiteLLM a few of its own (FIRST_CALL_IMPORTS). The
    client's only when some judge's calls go through the openai SDK (`sdk`:
    route.Route.direct), else the import would only delay the first call.
    """
    names = [*FIRST_CALL_IMPORTS, "openai.resources"] if sdk else FIRST_CALL_IMPORTS
    missing = [name for name in names if name not in sys.modules]
    if not missing:
        return
    with gc_paused():
        for name in missing:
            with contextlib.suppress(ImportError):  # another LiteLLM layout: a speed-up only
                importlib.import_module(name)


registered_unpriced: set[str] = set()
"""Models this process registered with LiteLLM at price 0 (`register_unpriced`): their map
entry is ours, and they still have no price."""


def model_price(litellm: ModuleType, settings: ModelSettings) -> Price | None:
    """The model's price: the user's --price, else LiteLLM's bundled map, else None."""
    if settings.price is not None:
        return settings.price
    return listed_price(litellm, settings.name)


def listed_price(litellm: ModuleType, name: str) -> Price | None:
    """The price LiteLLM's bundled map lists for the model, whatever --price says; None for
    a model it does not list, or lists only because judge filed it (register_unpriced).
    """
    if name in registered_unpriced:
        return None
    try:
        info = litellm.get_model_info(name)
    except Exception:  # noqa: BLE001 - LiteLLM raises several types for "not mapped"
        return None
    if not info or info.get("input_cost_per_token") is None:
        return None
    return Price(
        input_per_mtok=float(info["input_cost_per_token"]) * 1e6,
        output_per_mtok=float(info.get("output_cost_per_token") or 0.0) * 1e6,
    )


def register_unpriced(litellm: ModuleType, models: list[ModelSettings]) -> None:
    """File each model behind --api-base that LiteLLM has no price for in LiteLLM's map, at
    price 0, once per process.

    LiteLLM prices every reply itself; for a model its map does not know (any local or
    self-hosted name) each call then searches the whole map, name variant by variant, and
    records a "zero cost" finding: ~10% of a call's CPU, measured (make bench). Registered,
    the look-up is a hit. Nothing judge reports changes: a --price is applied by judge
    itself (client._reply), and such a model still counts as unpriced (model_price). Only
    --api-base models: for them judge never asks LiteLLM's map anything else (the schema
    decision is the settings', config.schema_decision), so an entry of ours answers nothing
    in their place.
    """
    for settings in models:
        name = settings.name
        if not settings.api_base or name in registered_unpriced:
            continue
        if listed_price(litellm, name) is not None:
            continue
        if file_at_price_zero(litellm, name, settings.api_base):
            registered_unpriced.add(name)


def file_at_price_zero(litellm: ModuleType, name: str, api_base: str) -> bool:
    """File the model `name` in LiteLLM's price map at price 0 (see register_unpriced);
    False when LiteLLM would not take it (a speed-up only: LiteLLM then searches per call).
    """
    try:
        provider = litellm.get_llm_provider(name, api_base=api_base)[1]
        entry = {
            "input_cost_per_token": 0.0,
            "output_cost_per_token": 0.0,
            "litellm_provider": provider,
            "mode": "chat",
        }
        litellm.register_model({name: entry})
    except Exception:  # noqa: BLE001 - LiteLLM raises several types for a name it refuses
        return False
    return True


def required_price(litellm: ModuleType, settings: ModelSettings) -> Price:
    """The model's price, or ConfigError: a budget cannot be kept without one."""
    price = model_price(litellm, settings)
    if price is None:
        raise ConfigError(
            f"--max-cost needs a price, and LiteLLM has none for {settings.name}",
            hint="give one with --price IN,OUT (USD per million tokens)",
        )
    return price


def check_prices(models: list[ModelSettings]) -> None:
    """--max-cost: ConfigError unless every model has a price. Run where the run is
    configured, before the reply cache answers anything, so the answer does not depend on
    what the cache holds; LiteLLM's map (and its ~2 s import) is read only for a model
    without --price.
    """
    unpriced = [settings for settings in models if settings.price is None]
    if unpriced:
        litellm = import_litellm()
        for settings in unpriced:
            required_price(litellm, settings)


def check_vision(models: list[ModelSettings], shown: ImagesShown) -> None:
    """Cases that show images (`shown`): ConfigError (exit 2, before any call) when LiteLLM's
    model map says a judge cannot see them. A model the map does not know (a local
    server's name behind --api-base, `openai/NAME`) is not refused: nothing says it cannot.
    """
    litellm = import_litellm()
    blind = [settings.name for settings in models if sees_images(litellm, settings.name) is False]
    if blind:
        cases = "a case shows" if shown.count == 1 else f"{shown.count} cases show"
        raise ConfigError(
            f"{cases} images (the first: {shown.first}), and LiteLLM's model map says "
            f"{' and '.join(blind)} cannot see images",
            hint="judge them with a vision model (e.g. --model gpt-4o-mini); a model the "
            "map has wrong can be reached as --model openai/NAME --api-base URL",
        )


def sees_images(litellm: ModuleType, model: str) -> bool | None:
    """Whether LiteLLM's model map says the model sees images; None when the map does not
    know the model, or knows only what judge filed for it (register_unpriced).
    """
    if model in registered_unpriced:
        return None
    try:
        litellm.get_model_info(model)
    except Exception:  # noqa: BLE001 - LiteLLM raises several types for "not mapped"
        return None
    # True only where the map's entry says so: an entry without the key is a model that
    # takes text only (gpt-3.5-turbo, o1-mini, deepseek-chat).
    return bool(litellm.supports_vision(model=model))


def check_endpoints(models: list[ModelSettings], *, priced: bool) -> None:
    """What can be checked before the first call, without the network: LiteLLM knows each
    model's provider, the provider's API key is in the environment, and (with --max-cost,
    `priced`) each model has a price. ConfigError (exit 2) names the fix.
    """
    litellm = import_litellm()
    for settings in models:
        try:
            provider = litellm.get_llm_provider(settings.name, api_base=settings.api_base)[1]
        except Exception:  # noqa: BLE001 - LiteLLM raises BadRequestError for "no provider"
            raise ConfigError(
                f"--model {settings.name}: LiteLLM does not know this provider",
                hint="write the model as provider/name (e.g. openai/gpt-4o-mini, "
                "anthropic/claude-sonnet-4-5); for an OpenAI-compatible server use "
                "--model openai/NAME --api-base URL",
            ) from None
        if settings.api_key is None and settings.api_base is None:
            check_key(litellm, settings.name, provider)
        if priced:
            required_price(litellm, settings)


def check_key(litellm: ModuleType, model: str, provider: str) -> None:
    """ConfigError when the provider's API key variable is not set. Only plain key
    variables are checked: clouds (Bedrock, Vertex, Azure) also find credentials in files
    and instance roles, which the environment does not show.
    """
    env = litellm.validate_environment(model=model)
    missing = [str(k) for k in env.get("missing_keys") or []]
    if env.get("keys_in_environment") or not missing:
        return
    if all(k.endswith("_API_KEY") for k in missing):
        raise ConfigError(
            f"--model {model} needs {' or '.join(missing)} in the environment",
            hint=f"export {missing[0]}=... (or, for an OpenAI-compatible server, "
            f"--model openai/NAME --api-base URL)",
        )


FLUSH_TIMEOUT_S = 5.0
"""How long LiteLLM's logging worker may take to finish at the end of a run."""


LASTING_LOOPS: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()
"""Event loops that outlive the runs made on them (the Python API's one loop, which every
API call and job shares: LiteLLM binds process-wide state to one loop at a time). At the
end of a run their pooled clients stay open for the next; they close with the loop."""


async def settle_logging(*, stop: bool = True) -> None:
    """Let LiteLLM's logging worker finish what it was given; with `stop`, end its task too.

    A loop that outlives its runs (LASTING_LOOPS) stops it whenever it falls idle: the
    worker follows the loop that last used it, and a task of its left waiting on a loop that
    lives on is dropped when another loop takes the worker ("Task was destroyed but it is
    pending!" at exit). Its next call starts it again.
    """
    try:
        from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER
    except ImportError:  # another LiteLLM layout: nothing to wait for
        return
    # Bounded: at an interrupt its consumer task may be cancelled before this runs, and then
    # nothing would ever drain what it waits for.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(GLOBAL_LOGGING_WORKER.flush(), timeout=FLUSH_TIMEOUT_S)
    if stop:
        await GLOBAL_LOGGING_WORKER.stop()


async def close_clients(litellm: ModuleType, *, final: bool = False) -> None:
    """Let LiteLLM's logging worker finish, and close its pooled HTTP clients, before the
    event loop ends (else their coroutines are left unawaited on a closed loop). The
    worker is not idle after batch calls: retrieving a completed batch makes it download
    the batch's files to price them. On a loop that outlives its runs (LASTING_LOOPS) the
    clients are closed only when the loop ends (`final`).

    Closed clients are dropped from LiteLLM's client cache too: it keys them by the loop's
    id, which a later loop may reuse, and it hands out a closed client as it is (every call
    then fails with "Connection error", issue 31).
    """
    if asyncio.get_running_loop() in LASTING_LOOPS and not final:
        await settle_logging()
        return
    await settle_logging(stop=False)
    close = getattr(litellm, "close_litellm_async_clients", None)
    if close is not None:
        await close()
    cached = getattr(litellm, "in_memory_llm_clients_cache", None)
    if cached is not None and hasattr(cached, "flush_cache"):
        cached.flush_cache()


async def close_dropped_clients() -> None:
    """Close, on this loop, the HTTP clients LiteLLM dropped without closing.

    LiteLLM's batch and file calls (`aretrieve_batch`, `afile_content`, and its logging
    worker pricing a completed batch) build OpenAI SDK clients that it neither caches nor
    closes. They sit in reference cycles until the collector finds them, and the SDK's
    finalizer then schedules their `aclose()` on whatever loop is running: in a later one
    (`judge collect` checks its batches with one loop per check, then judges in another),
    that close touches connections of a closed loop and dies with "Event loop is closed",
    printed as "Task exception was never retrieved" with 30 lines of traceback. Collected
    here, while the loop that made them runs, they close where they belong. (Only after
    batch and file calls: online calls use LiteLLM's cached clients, which close_clients
    closes, and a full collection at the end of a long run costs ~50 ms.)
    """
    before = asyncio.all_tasks()
    gc.collect()
    closing = asyncio.all_tasks() - before
    if not closing:
        return
    await asyncio.wait(closing, timeout=FLUSH_TIMEOUT_S)
    for task in closing:
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: a client that cannot close is no news to a user
