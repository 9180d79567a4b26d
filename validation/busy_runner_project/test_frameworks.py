"""Three real ms-scale framework paths against their bare calls (issue 45 validation)."""

from __future__ import annotations

import pytest


# --- haystack: a three-component pipeline against the same three functions called in turn
def _haystack():
    from haystack import Pipeline, component

    def build(query: str) -> str:
        return f"Answer briefly: {query}"

    def generate(prompt: str) -> str:
        return prompt.upper()[::-1]

    def parse(reply: str) -> dict:
        return {"answer": reply[:20], "length": len(reply)}

    @component
    class Builder:
        @component.output_types(prompt=str)
        def run(self, query: str):
            return {"prompt": build(query)}

    @component
    class Generator:
        @component.output_types(reply=str)
        def run(self, prompt: str):
            return {"reply": generate(prompt)}

    @component
    class Parser:
        @component.output_types(result=dict)
        def run(self, reply: str):
            return {"result": parse(reply)}

    pipe = Pipeline()
    pipe.add_component("builder", Builder())
    pipe.add_component("generator", Generator())
    pipe.add_component("parser", Parser())
    pipe.connect("builder.prompt", "generator.prompt")
    pipe.connect("generator.reply", "parser.reply")
    return pipe, (lambda q: parse(generate(build(q))))


@pytest.mark.overhead(max="2000x")
def test_haystack_pipeline(overhead):
    pipe, bare = _haystack()
    overhead.compare(
        baseline=lambda: bare("what is overhead?"),
        framework=lambda: pipe.run({"builder": {"query": "what is overhead?"}})["parser"]["result"],
    )


# --- strawberry: a GraphQL query against the resolver it runs
def _strawberry():
    import strawberry

    def greet(name: str) -> str:
        return f"Hello {name}"

    @strawberry.type
    class Query:
        @strawberry.field
        def hello(self, name: str) -> str:
            return greet(name)

    return strawberry.Schema(query=Query), greet


@pytest.mark.overhead(max="20000x")
def test_strawberry_query(overhead):
    schema, greet = _strawberry()
    query = '{ hello(name: "overhead") }'
    overhead.compare(
        baseline=lambda: {"hello": greet("overhead")},
        framework=lambda: schema.execute_sync(query).data,
    )


# --- llama-index: a two-step workflow against the same two async functions
def _llama():
    from llama_index.core.workflow import Event, StartEvent, StopEvent, Workflow, step

    async def retrieve(query: str) -> list[str]:
        return [query, query[::-1]]

    async def answer(docs: list[str]) -> str:
        return " | ".join(docs)

    class Retrieved(Event):
        docs: list[str]

    class Flow(Workflow):
        @step
        async def fetch(self, ev: StartEvent) -> Retrieved:
            return Retrieved(docs=await retrieve(ev.query))

        @step
        async def respond(self, ev: Retrieved) -> StopEvent:
            return StopEvent(result=await answer(ev.docs))

    return Flow(timeout=10), retrieve, answer


@pytest.mark.anyio
@pytest.mark.overhead(max="5000x")
async def test_llama_workflow(overhead):
    flow, retrieve, answer = _llama()

    async def bare():
        return await answer(await retrieve("overhead"))

    async def framework():
        return await flow.run(query="overhead")

    await overhead.acompare(baseline=bare, framework=framework)
