"""Rewriting: the question -> a constrained rewrite (rewriter, faithfulness filter, composer, rewrite cache and log).

Nothing is imported here: import the modules themselves (`rewriting.rewriter`, `rewriting.composer`, ...).
"""
