"""
Progress bars and model-loading output, under one switch.

Every bar of the package is made by `progress_bar`: it shows only on work that lasts longer than `DELAY_S`
(reading a few files or writing a few chunks prints nothing; `$CODE_ALIAS_PROGRESS_DELAY` changes it), and not
at all when the component's own `progress_bar` parameter is off or the process-wide switch
`$CODE_ALIAS_PROGRESS=0` is set, nor inside `progress_disabled` (what `code-alias --no-progress` and
`code-alias bench ... --no-progress` wrap their command in).
`quiet_model_loading` hides what transformers and sentence-transformers print while a model loads (the
"Loading weights" bar, load reports), so a question does not print it every time.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from tqdm import tqdm

PROGRESS_ENV = "CODE_ALIAS_PROGRESS"
# Seconds a piece of work runs before its bar appears (tqdm's `delay`): short work prints nothing.
DELAY_S = 1.0
DELAY_ENV = "CODE_ALIAS_PROGRESS_DELAY"  # overrides DELAY_S (seconds; 0 shows every bar at once)
_OFF = {"0", "false", "no", "off"}
_MODEL_LOGGERS = ("sentence_transformers", "transformers", "huggingface_hub")


# The `--no-progress` switch of the command running in this context: set for the block of `progress_disabled`, seen
# by everything the block runs (`asyncio.to_thread` copies it to its threads), never written to the environment.
# Module level, as Python requires of a context variable; its value is per context, not shared state.
_SILENCED: contextvars.ContextVar[bool] = contextvars.ContextVar("code_alias_progress_silenced", default=False)


def progress_enabled() -> bool:
    """Whether bars may show here: not inside `progress_disabled`, and `$CODE_ALIAS_PROGRESS` is not 0/false/no/off."""
    if _SILENCED.get():
        return False
    return os.environ.get(PROGRESS_ENV, "1").strip().lower() not in _OFF


@contextmanager
def progress_disabled(disabled: bool = True) -> Iterator[None]:
    """
    Silence every progress bar for the duration of a block (what `--no-progress` does around a command): the
    package's own, and those of Hugging Face libraries through their own switches; then everything as it was.

    :param disabled: False makes this a no-op (for `with progress_disabled(args.no_progress):`).
    """
    if not disabled:
        yield
        return
    token = _SILENCED.set(True)
    restore = _silence_hugging_face()
    try:
        yield
    finally:
        _SILENCED.reset(token)
        restore()


def _silence_hugging_face() -> Callable[[], None]:
    """Turn the bars of huggingface_hub and transformers off; returns what puts both back as they were."""
    before = _hugging_face_bars()
    with contextlib.suppress(ImportError):
        # Optional (sentence-transformers brings it); its switch also sets transformers' when that loads later.
        from huggingface_hub import utils as hub

        hub.disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    return lambda: _restore_hugging_face_bars(before)


def _hugging_face_bars() -> tuple[bool | None, bool | None]:
    """(huggingface_hub's bars on, transformers' bars on); None for a library not loaded (transformers) or absent."""
    hub_on: bool | None = None
    with contextlib.suppress(ImportError):
        from huggingface_hub import utils as hub

        hub_on = not hub.are_progress_bars_disabled()
    return hub_on, _transformers_bars_enabled() if "transformers" in sys.modules else None


def _restore_hugging_face_bars(before: tuple[bool | None, bool | None]) -> None:
    """
    Turn back on the switches that were on (only those: a block that found them off, beside another that turned them
    off, leaves them to that one). transformers copies huggingface_hub's switch when it is first imported, so a
    transformers loaded inside the block (a model loaded under `--no-progress`) counts as on when the hub was; and its
    switch sets the hub's too, hence transformers first, then the hub.
    """
    hub_on, transformers_on = before
    transformers_was_on = transformers_on if transformers_on is not None else hub_on
    if transformers_was_on and "transformers" in sys.modules and not _transformers_bars_enabled():
        from transformers.utils import logging as transformers_logging

        transformers_logging.enable_progress_bar()
    if hub_on:
        from huggingface_hub import utils as hub

        if hub.are_progress_bars_disabled():
            hub.enable_progress_bars()


def _transformers_bars_enabled() -> bool:
    if "transformers" not in sys.modules:
        return False
    from transformers.utils import logging as transformers_logging

    return bool(transformers_logging.is_progress_bar_enabled())


def progress_bar(iterable: Iterable[Any] | None = None, *, enabled: bool = True, **kwargs: Any) -> Any:
    """
    A tqdm bar that honours the process-wide switch and shows only on long work.

    :param iterable: What to iterate over, as for tqdm.
    :param enabled: The caller's own setting (a component's `progress_bar` parameter).
    :param kwargs: tqdm's other arguments (`total`, `desc`, `unit`...); `delay` defaults to `$CODE_ALIAS_PROGRESS_DELAY`
        or `DELAY_S`.
    :returns: A `tqdm.tqdm` (disabled bars cost nothing and print nothing).
    :raises ValueError: `$CODE_ALIAS_PROGRESS_DELAY` is not a number of seconds.
    """

    if "delay" not in kwargs:
        text = os.environ.get(DELAY_ENV, "").strip()
        try:
            kwargs["delay"] = max(0.0, float(text)) if text else DELAY_S
        except ValueError:
            raise ValueError(f"{DELAY_ENV} must be a number of seconds, got {text!r}") from None
    return tqdm(iterable, disable=not (enabled and progress_enabled()), **kwargs)


@contextmanager
def quiet_model_loading() -> Iterator[None]:
    """
    While a model loads: no transformers progress bar ("Loading weights") and only errors from the model
    libraries' loggers. Each setting is put back afterwards.
    """

    loggers = [logging.getLogger(name) for name in _MODEL_LOGGERS]
    levels = [logger.level for logger in loggers]  # restored afterwards
    before = _hugging_face_bars()
    with contextlib.suppress(ImportError):  # no transformers: nothing of it to silence
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
        _restore_hugging_face_bars(before)
