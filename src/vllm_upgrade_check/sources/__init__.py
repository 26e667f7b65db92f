"""The sources stage: finding the files of a tree, reading each once, scanning it (in worker
processes when it pays), caching the results, and reading the Python environment and host."""
