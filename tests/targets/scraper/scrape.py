"""Scrape vLLM metrics: vllm:gpu_cache_usage_perc (a docstring, not a query)."""

import requests

# ruleid: TST-001
CACHE = "vllm:gpu_cache_usage_perc"
QUERIES = {
    # ruleid: TST-002
    "p99": "histogram_quantile(0.99, rate(vllm:e2e_request_latency_seconds_sum[5m]))",
}


def running(base: str) -> float:
    """Read vllm:num_requests_running."""
    # ok: TST-006
    # vllm:num_requests_running in a comment
    # ruleid: TST-006
    return requests.get(f"{base}/api/v1/query", params={"query": "vllm:num_requests_running"}).json()
