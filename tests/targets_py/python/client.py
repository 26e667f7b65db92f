"""OpenAI client code: never mentions the server by name."""

from openai import OpenAI

client = OpenAI(base_url="http://localhost:8000/v1")
resp = client.chat.completions.create(model="m", messages=[])
message = resp.choices[0].message
# ruleid: TST0280-002
print(message.reasoning_content)
# ruleid: TST0280-002
print(resp.model_dump()["choices"][0]["message"]["reasoning_content"])
# ruleid: TST0280-002
thought = message.model_extra.get("reasoning_content")


class Holder:
    def __init__(self) -> None:
        # ok: TST0280-002
        self.reasoning_content = ""
