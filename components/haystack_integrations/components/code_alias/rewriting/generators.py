"""The ChatGenerator side of the LLM rewrite: which generator to build, and how to ask each kind for JSON.

`chat_generator_spec` serialises a local GGUF model (llama.cpp) or an OpenAI-compatible server for the CLI, the
benchmark and the server; `generator_style` tells which structured-output dialect a generator speaks, and
`style_generation_kwargs` writes the JSON schema and the token cap in that dialect. `ConstrainedQueryRewriter`
(`rewriter.py`) is the only caller of the last two; nothing here knows the dictionary or the prompt.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Literal

from haystack.utils import Secret

StructuredOutput = Literal[
    "auto", "openai", "openai_responses", "llama_cpp", "json_object", "ollama", "bedrock", "transformers", "none"
]
STRUCTURED_OUTPUTS: tuple[str, ...] = (
    "auto",
    "openai",
    "openai_responses",
    "llama_cpp",
    "json_object",
    "ollama",
    "bedrock",
    "transformers",
    "none",
)
# In-process models are not safe to call from two threads at once: their calls always go through the slots.
IN_PROCESS_STYLES: frozenset[str] = frozenset({"llama_cpp", "transformers"})
LLAMA_CPP_GENERATOR = "haystack_integrations.components.generators.llama_cpp.chat.chat_generator.LlamaCppChatGenerator"
# Haystack's OpenAIChatGenerator, whose client starts without a key (a local server needs none; `openai_server`).
OPENAI_GENERATOR = (
    "haystack_integrations.components.code_alias.rewriting.openai_server.OpenAICompatibleChatGenerator"
)
OPENAI_KEY_ENV_VARS = ["CODE_ALIAS_OPENAI_API_KEY", "OPENAI_API_KEY"]
# A time-out cannot stop an in-process generation: it only throws the finished answer away while the cores stay
# busy. On 2 CPU cores the 1.5B took longer than the pipelines' 20 s on 183 of 299 SWE-QA questions (p50 21.6 s).
IN_PROCESS_TIMEOUT_S = 120.0


def chat_generator_spec(
    *,
    gguf: str | None = None,
    openai_base_url: str | None = None,
    model: str | None = None,
    timeout: float | None = None,
    n_ctx: int = 4096,
    n_threads: int | None = None,
) -> dict[str, Any]:
    """
    The serialised ChatGenerator for a local GGUF file (llama.cpp) or an OpenAI-compatible server.

    Used by the CLI, the benchmark and the integration test, and usable as `CodeSearch(chat_generator=...)`. The
    API key of an OpenAI-compatible server comes only from `$CODE_ALIAS_OPENAI_API_KEY` or `$OPENAI_API_KEY` (with
    neither, the client gets a placeholder, which local servers accept: `openai_server`); it is never serialised.

    :param gguf: Path of a GGUF model (needs the `[llama-cpp]` extra).
    :param openai_base_url: Base URL of an OpenAI-compatible server (Ollama, vLLM, llama.cpp server, OpenAI).
    :param model: The model name on that server (ignored for a GGUF file).
    :param timeout: The client's own time-out in seconds (OpenAI-compatible servers).
    :param n_ctx: Context window of a GGUF model.
    :param n_threads: CPU threads of a GGUF model; None = llama.cpp's default.
    :raises ValueError: Neither or both of `gguf` and `openai_base_url`.
    """
    if bool(gguf) == bool(openai_base_url):
        raise ValueError("give exactly one of a GGUF path or an OpenAI-compatible base URL")
    if gguf:
        model_kwargs: dict[str, Any] = {"verbose": False}
        if n_threads:
            model_kwargs["n_threads"] = n_threads
        return {
            "type": LLAMA_CPP_GENERATOR,
            "init_parameters": {
                "model": str(gguf),
                "n_ctx": n_ctx,
                "n_batch": 512,
                "model_kwargs": model_kwargs,
                "generation_kwargs": {"temperature": 0.0},
            },
        }
    return {
        "type": OPENAI_GENERATOR,
        "init_parameters": {
            "api_key": Secret.from_env_var(OPENAI_KEY_ENV_VARS, strict=False).to_dict(),
            "model": model or "qwen2.5-coder:1.5b",
            "api_base_url": openai_base_url,
            "timeout": timeout,
            "max_retries": 0,
            "generation_kwargs": {"temperature": 0.0},
        },
    }


def default_rewrite_timeout(*, gguf: str | None) -> float | None:
    """
    The rewrite's time-out when the user gave none: `IN_PROCESS_TIMEOUT_S` for a local GGUF model, None (the
    pipeline's own, 20 s) for a server, where waiting longer only holds a connection.

    :param gguf: The GGUF path the generator will load, or None.
    """
    return IN_PROCESS_TIMEOUT_S if gguf else None


def usable_chat_generator_spec(
    *,
    gguf: str | None = None,
    openai_base_url: str | None = None,
    model: str | None = None,
    timeout: float | None = None,
    n_threads: int | None = None,
) -> dict[str, Any]:
    """
    `chat_generator_spec` for a generator this process is about to run: what the CLI, the benchmark and the server
    all need before they load one.

    A GGUF file must exist. (An OpenAI-compatible server with no key in the environment needs nothing more: its
    generator hands the client a placeholder key, `openai_server.OpenAICompatibleChatGenerator`.)

    :raises FileNotFoundError: `gguf` is not a file.
    :raises ValueError: Neither or both of `gguf` and `openai_base_url`.
    """
    if gguf and not Path(gguf).is_file():
        raise FileNotFoundError(f"{gguf}: no such GGUF file")
    return chat_generator_spec(
        gguf=gguf, openai_base_url=openai_base_url, model=model, timeout=timeout, n_threads=n_threads
    )


def generator_style(generator: Any, structured_output: str) -> str:
    """The structured-output dialect of `generator`: `structured_output` unless "auto", then guessed from its class."""
    if structured_output != "auto":
        return structured_output
    if generator is None:
        return "none"
    kind = type(generator)
    name, module = kind.__name__, kind.__module__
    if "llama_cpp" in module:
        return "llama_cpp"
    if name == "OpenAIResponsesChatGenerator" or name == "AzureOpenAIResponsesChatGenerator":
        return "openai_responses"
    if "OpenAI" in name or module.startswith("haystack.components.generators.chat.openai"):
        return "openai"
    if "ollama" in module:
        return "ollama"
    if "amazon_bedrock" in module:
        return "bedrock"
    if name == "HuggingFaceLocalChatGenerator":
        return "transformers"
    return "none"


def style_generation_kwargs(style: str, generator: Any, schema: dict[str, Any], cap: int) -> dict[str, Any]:
    """The JSON `schema` and the output token `cap` as generation kwargs in `style`'s terms (`generator_style`)."""
    if style == "openai":
        token_key = "max_tokens" if getattr(generator, "api_base_url", None) else "max_completion_tokens"
        return {
            token_key: cap,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "code_search_rewrite", "strict": True, "schema": schema},
            },
        }
    if style == "openai_responses":
        return {
            "max_output_tokens": cap,
            "text": {
                "format": {"type": "json_schema", "name": "code_search_rewrite", "strict": True, "schema": schema}
            },
        }
    if style == "llama_cpp":
        return {"max_tokens": cap, "response_format": {"type": "json_object", "schema": schema}}
    if style == "json_object":
        return {"max_tokens": cap, "response_format": {"type": "json_object"}}
    if style == "ollama":
        return {"num_predict": cap}
    if style == "bedrock":
        return {"maxTokens": cap}
    if style == "transformers":
        return {"max_new_tokens": cap}
    return {}


def accepts(generator: Any, method: str, parameter: str) -> bool:
    """Whether `generator.<method>` takes a keyword `parameter` (by name or through `**kwargs`)."""
    function = getattr(generator, method, None)
    if function is None:
        return False
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return parameter in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
