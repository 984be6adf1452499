"""Produce real Inspect AI logs offline (mockllm), for the fixtures and the slow test.

Run ``python tests/ingest/inspect_task.py OUT_DIR [eval|json] [rerun]`` with inspect-ai
installed. Five samples × 4 epochs, three scorers:

* ``easy`` always right, ``hard`` always wrong, ``flaky`` right on odd epochs,
  ``3`` (an integer id) right on epochs 1-3, ``boom`` errors on epoch 2.
* ``match`` gives C/I, ``grade`` gives C/P/I, ``confidence`` a float.
* ``rerun``: the same task run again after a fix: ``flaky`` right on every epoch and
  ``boom`` no longer errors (a second log, as a re-run writes one).

The model's answer depends only on (sample, epoch), so the log is the same
whatever order Inspect runs the epochs in.
"""

from __future__ import annotations

import sys
from typing import Any

ANSWERS = {
    # sample input → the epochs (1-based) on which the model answers right
    "easy": {1, 2, 3, 4},
    "hard": set(),
    "flaky": {1, 3},
    "three": {1, 2, 3},
    "boom": {1, 2, 3, 4},
}
#: the re-run after a fix: flaky is right every time, boom no longer explodes.
RERUN = {**ANSWERS, "flaky": {1, 2, 3, 4}}
ANSWERED = ANSWERS


def build_task() -> Any:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import CORRECT, INCORRECT, PARTIAL, Score, Target, mean, scorer
    from inspect_ai.scorer import match as match_scorer
    from inspect_ai.solver import Generate, TaskState, generate, solver

    @solver
    def tag_epoch() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            if state.sample_id == "boom" and state.epoch == 2 and ANSWERED is ANSWERS:
                raise RuntimeError("sandbox exploded on epoch 2")
            state.user_prompt.text = f"{state.user_prompt.text} epoch={state.epoch}"
            return state

        return solve

    @scorer(metrics=[mean()])
    def grade() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            answer = state.output.completion.strip()
            if answer == target.text:
                return Score(value=CORRECT, answer=answer)
            if answer.startswith("almost"):
                return Score(value=PARTIAL, answer=answer)
            return Score(value=INCORRECT, answer=answer)

        return score

    @scorer(metrics=[mean()])
    def confidence() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=0.9 if state.output.completion.strip() == target.text else 0.2)

        return score

    samples = [
        Sample(id="easy", input="easy", target="yes"),
        Sample(id="hard", input="hard", target="yes"),
        Sample(id="flaky", input="flaky", target="yes"),
        Sample(id=3, input="three", target="yes"),
        Sample(id="boom", input="boom", target="yes"),
    ]
    return Task(
        name="mock_reliability",
        dataset=samples,
        solver=[tag_epoch(), generate()],
        scorer=[match_scorer(), grade(), confidence()],
        epochs=4,
    )


def model() -> Any:
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def respond(messages: Any, tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        text = messages[-1].text
        name, _, epoch = text.rpartition(" epoch=")
        if int(epoch) in ANSWERED[name]:
            answer = "yes"
        elif name == "flaky":
            answer = "almost no"
        else:
            answer = "no"
        output = ModelOutput.from_content(model="mockllm/model", content=answer)
        # Without usage, mockllm counts tokens with a tokenizer it would download.
        output.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)
        return output

    return get_model("mockllm/model", custom_outputs=respond)


def main(out_dir: str, log_format: str = "eval", variant: str = "first") -> None:
    from inspect_ai import eval as inspect_eval

    global ANSWERED
    ANSWERED = RERUN if variant == "rerun" else ANSWERS

    logs = inspect_eval(
        build_task(),
        model=model(),
        log_dir=out_dir,
        log_format=log_format,  # type: ignore[arg-type]
        fail_on_error=False,
        display="none",
    )
    print(logs[0].location)


if __name__ == "__main__":
    main(*sys.argv[1:])
