"""Issue 26 point 16: every notebook's closing ("What this does not do") carries the whole completion standard of
its section of the chapter (shared/chapter/inference-and-serving.zh.txt, the sentences that open with 完成标准).

STANDARDS lists, per topic, the points of its section's standard (reasoning's notebook closes two sections: the
interface's and the advice's). A point is a tuple of patterns; the closing carries it when one of its sentences
matches every pattern of the tuple (case-insensitive). The patterns name what the sentence must be about, not its
wording: "a higher hit rate is not success" is (hit rate, not success / no measure). A closing that drops a point,
or scatters it over sentences that each say half of it, fails with the point's name.
"""
import importlib
import re

import pytest

from grader import topics

STANDARDS: dict[str, dict[str, tuple[str, ...]]] = {
    "decoding": {  # 区分分布控制与事实验证。温度低可以减少某些随机变化，但不会补上未读源码，也不能解决工具失败和环境不稳定。
        "controlling the distribution is not verifying a fact": (r"distribution", r"\bfacts?\b", r"\bnot\b"),
        "a likely sequence is not thereby natural or correct": (r"likely|probab", r"natural|correct"),
        "a low temperature removes only some random variation": (r"low temperature", r"variation"),
        "it does not make up for unread source code": (r"low temperature", r"source code", r"never read|unread"),
        "it does not repair a failed tool call": (r"low temperature", r"\btool", r"fail"),
        "it does not steady an unstable environment": (r"low temperature", r"unstable|flaky", r"environment"),
    },
    "sampling": {  # 研究条件与实际任务不同。开放文本中的优势不能直接变成所有编码Agent都必须使用某个固定p值。
        "tail filtering controls sampling, it verifies nothing": (r"nucleus|top-p", r"never checks|verif"),
        "research conditions are not the real task": (r"research conditions", r"\btasks?\b"),
        "the degeneration study judged open-ended text": (r"degeneration", r"open-ended"),
        "no fixed p fits every coding agent": (r"no fixed p", r"coding agents?"),
        "the 0.70/0.15/0.10/0.05 case is arithmetic, not a setting": (r"0\.70", r"arithmetic",
                                                                      r"not a recommended setting"),
    },
    "kv_cache": {  # 把缓存看成计算状态而非记忆知识。删除缓存可能重新计算，但不等于删除模型参数中的能力；缓存命中也不等于永久记住用户。
        "a cache is computation state, not memory": (r"computation state", r"not memory|not .*knowledge"),
        "deleting it costs a recomputation, never a capability": (r"delet", r"recomput", r"capabilit|parameters"),
        "a hit is not the model remembering a user": (r"\bhit\b", r"remember", r"\buser\b"),
    },
    "reasoning": {
        # interface: 按任务需要选择预算，不把更长思考当万能补救。模型不能通过纯推理直接读取未提供的工作目录。
        "more effort does not replace missing evidence": (r"effort", r"missing evidence"),
        "thinking cannot read what the model was never given": (r"file|directory", r"never given|not given"),
        # advice: 把预算与质量联系起来。失败来自证据缺失或权限时，调高推理努力可能只是增加费用而不改变可行性。
        "a budget is tied to the quality it buys": (r"budget", r"quality"),
        "missing evidence or permissions: more effort only adds cost": (r"permission", r"effort", r"cost",
                                                                       r"feasib|fail"),
    },
    "timeline": {  # 提出可测性能假设。不需要先搭生产推理服务，也不应从一个样例推断所有任务的加速比例。
        "state a result as a testable hypothesis": (r"testable", r"hypothesis"),
        "no production serving stack is needed": (r"production", r"serving|service"),
        "one session's speed-up does not carry over to every task": (r"speed-up|speedup", r"one session",
                                                                    r"every task|all tasks"),
    },
    "prompt_cache": {  # 区分缓存、压缩和长期记忆。命中率提高不是充分成功指标，任务质量、总费用与总时长必须一起看。
        "cache, compression and long-term memory are three things": (r"cache", r"compression",
                                                                     r"long-term memory"),
        "a higher hit rate is not success": (r"hit rate", r"not success|no measure|not a measure"),
        "quality, total cost and total time read together": (r"quality", r"total cost", r"total time"),
    },
    "paged_kv": {  # 理解存储组织与模型能力分层。教材模拟不复现GPU性能，不能把空间比例当成真实吞吐倍数。
        "paging organises memory, it does not change what the model can do": (r"pag", r"truer|capabilit|what the "
                                                                                      r"model computes"),
        "the figures' space ratios are not throughput": (r"ratio", r"throughput"),
    },
    "flash_attention": {  # 把算法复杂度、IO和端到端体验分开。采用FlashAttention也不意味着模型自动理解任意长输入。
        "complexity, IO and the whole request are kept apart": (r"complexity", r"\bIO\b|memory traffic",
                                                                r"request|end-to-end"),
        "a kernel's speed-up is not the whole request's": (r"whole request|end-to-end", r"speed-up|speedup"),
        "it does not make a model understand arbitrarily long input": (r"understand", r"long (?:input|context)"),
    },
    "speculative": {  # 理解"提出—验证"与简单投票不同。这里验证的是目标分布条件，不等于外部事实核查；目标模型仍可能生成错误答案。
        "propose-and-verify is not voting": (r"propose-and-verify", r"voting"),
        "verifying a distribution is not fact-checking": (r"distribution", r"fact-checking"),
        "the target can still be wrong": (r"target", r"mistake|error|wrong"),
    },
    "serving": {  # 从用户任务而非单内核速度理解部署。未实际运行硬件实验时，只陈述机制与假设，不把文档能力写成自己的测试成绩。
        "judge a deployment by users' tasks, not one kernel's speed": (r"users'? tasks", r"kernel"),
        "without your own hardware experiment, state mechanisms and assumptions": (r"hardware experiment",
                                                                                   r"mechanisms and assumptions"),
        "a documented capability is not your measurement": (r"document", r"not your (?:own )?measurement"),
    },
    "latency": {  # 优化成功任务总耗时，而不是孤立Token指标。若模型主要等待测试环境，调采样或换缓存策略可能不是最有价值的改动。
        "optimise the total time of successful tasks, not token metrics": (r"total time", r"succe",
                                                                           r"token metric"),
        "when the agent waits on tests, sampling or the cache is not the change": (r"test environment",
                                                                                   r"sampling", r"cache"),
    },
}
NOT_A_SENTENCE_END = r"(?<!\bal\.)(?<!e\.g\.)(?<!i\.e\.)(?<!\bvs\.)"


def closing(topic: str) -> str:
    """The closing paragraphs of a topic's notebook, as one line of text."""
    content = importlib.import_module(f"grader.learner.notebooks.topics.{topic}")
    return " ".join(content.CLOSING.split())


def sentences(text: str) -> list[str]:
    """The sentences of `text`: split after . ! ? before a capital, a quote or a bracket (not after "et al.")."""
    return re.split(rf"{NOT_A_SENTENCE_END}(?<=[.!?])\s+(?=[A-Z\"`(*])", text)


def missing_points(text: str, standard: dict[str, tuple[str, ...]]) -> list[str]:
    """The points of `standard` that no sentence of `text` carries."""
    said = sentences(text)
    return [point for point, patterns in standard.items()
            if not any(all(re.search(p, s, re.IGNORECASE) for p in patterns) for s in said)]


def test_every_topic_has_its_standard():
    assert set(STANDARDS) == set(topics.all_topics())


def test_a_point_needs_one_sentence_that_says_all_of_it():
    standard = {"low temperature is no substitute for reading": (r"low temperature", r"source code")}
    assert missing_points("A low temperature does not replace the source code.", standard) == []
    assert missing_points("A low temperature helps. Read the source code.", standard) == list(standard)
    assert sentences('Holtzman et al. showed it. "Quote" next. (A) last.') == \
        ["Holtzman et al. showed it.", '"Quote" next.', "(A) last."]


@pytest.mark.parametrize("topic", sorted(STANDARDS))
def test_the_closing_carries_the_whole_standard(topic):
    missing = missing_points(closing(topic), STANDARDS[topic])
    assert not missing, f"the closing of {topic}'s notebook has no sentence for: " + "; ".join(missing)
