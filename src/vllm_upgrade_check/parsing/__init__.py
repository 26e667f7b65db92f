"""The parsing layer: syntaxes read with positions (shell, YAML, requirement strings, ELF),
words and spans, text positions and files read and written byte for byte. It knows nothing
of vLLM."""
