"""Shared helpers of the llama.cpp peer tests: the model path, llama.cpp
contexts (llama-cpp-python, test tool only) and the chat template rendered by
jinja2 the way transformers renders it."""

import os
import subprocess
import sys

import numpy as np

import llama_cpp


def model_path(tool, model):
    """The file Hearth's catalog resolves MODEL to (peer_tool/tokenize_tool MODEL path)."""
    cmd = [tool, "path", model] if "peer_tool" in os.path.basename(tool) else [tool, model, "path"]
    return run(cmd).strip()


def load_llama(path, n_ctx, threads=2, logits_all=False, vocab_only=False, flash_attn=False):
    return llama_cpp.Llama(model_path=path, n_ctx=n_ctx, n_batch=min(n_ctx, 512), n_threads=threads,
                           n_threads_batch=threads, logits_all=logits_all, vocab_only=vocab_only,
                           flash_attn=flash_attn, verbose=False)


def last_logits(llm):
    """The logits of the last token llm.eval saw (logits_all=False keeps one row)."""
    return np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).copy()


def render_chat(template, messages, bos="", eos=""):
    """jinja2 configured as transformers renders chat templates."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(msg):
        raise jinja2.exceptions.TemplateError(msg)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    return env.from_string(template).render(messages=messages, add_generation_prompt=True, bos_token=bos,
                                            eos_token=eos)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(map(str, cmd))} exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    return p.stdout
