"""`OpenAICompatibleChatGenerator`: Haystack's `OpenAIChatGenerator` for a server that may need no API key.

A local OpenAI-compatible server (Ollama, vLLM, a llama.cpp server) ignores the key, but the OpenAI client refuses
to start without one. Instead of writing a placeholder into the process's environment, this generator hands the
client the placeholder itself when its `api_key` secret resolves to nothing. The secret stays what it was given
(an environment-variable secret by default), so `to_dict` never serialises a key, placeholder or real.
"""

from __future__ import annotations

from typing import Any

from haystack import component
from haystack.components.generators.chat.openai import OpenAIChatGenerator
from haystack.utils import Secret

from .generators import OPENAI_KEY_ENV_VARS

__all__ = ["PLACEHOLDER_API_KEY", "OpenAICompatibleChatGenerator"]

# What the client is given when no key is set: local servers accept any key.
PLACEHOLDER_API_KEY = "no-key"


@component
class OpenAICompatibleChatGenerator(OpenAIChatGenerator):
    """
    `OpenAIChatGenerator` whose client starts without a key: with none in its `api_key` secret (by default
    `$CODE_ALIAS_OPENAI_API_KEY` or `$OPENAI_API_KEY`, not required), the client gets `PLACEHOLDER_API_KEY`.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias.rewriting.openai_server import OpenAICompatibleChatGenerator

    generator = OpenAICompatibleChatGenerator(api_base_url="http://localhost:11434/v1", model="qwen2.5-coder:1.5b")
    print(generator.to_dict()["init_parameters"]["api_key"])   # the environment-variable secret, never a key
    ```

    :param api_key: The key's secret; None = `$CODE_ALIAS_OPENAI_API_KEY` or `$OPENAI_API_KEY`, when set.
    :param kwargs: `OpenAIChatGenerator`'s other parameters (`model`, `api_base_url`, `timeout`...).
    """

    def __init__(self, *, api_key: Secret | None = None, **kwargs: Any) -> None:
        # Named, not `super()`: `@component` makes a new class, which the zero-argument form does not see.
        OpenAIChatGenerator.__init__(
            self, api_key=api_key or Secret.from_env_var(OPENAI_KEY_ENV_VARS, strict=False), **kwargs
        )

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = OpenAIChatGenerator._client_kwargs(self)
        if not kwargs.get("api_key"):
            kwargs["api_key"] = PLACEHOLDER_API_KEY
        return kwargs
