from openai import OpenAI

deepseek = OpenAI(base_url="https://api.deepseek.com")
answer = deepseek.chat.completions.create(model="deepseek-reasoner", messages=[])
print(answer.choices[0].message.reasoning_content)  # ok: VUC0160-018
