"""An annotated template grammar of short questions: part of the course's treebank.

Each :class:`Frame` is a question pattern with its gold dependency tree, written in a
compact notation, one token per item: ``form:head:relation``, with ``head`` the 1-based
position of the head in the frame (``0`` for the root). A slot ``{CAT}:head:relation``
stands for a phrase of category ``CAT``; the phrase's own head word takes the slot's head
and relation, and the phrase's other words keep the internal tree written in the filler.

A filler is written ``word word@rel>k ...``: a bare word is the phrase's head; ``@rel>k``
attaches a word to the ``k``-th word of the filler (1-based) with relation ``rel``.
Example: ``苹果@nmod>2 手机`` is the noun phrase 苹果手机 headed by 手机.

:func:`generate` fills the frames, segments every sentence with the course's jieba
segmentation and keeps only the sentences whose jieba words are exactly the grammar's
words; the rejected ones are counted (:class:`GrammarReport`), never dropped silently.
Everything here — frames, fillers, trees — was written for the course.
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass, field
from typing import Iterable

from lessons_lib.errors import CourseInputError
from lessons_lib.syntax.treebank import TreebankSentence, make_sentence

# ---------------------------------------------------------------------------------------
# Slot fillers, by category, as "|"-separated text. Heads of phrases are bare; dependents carry @rel>k.
# ---------------------------------------------------------------------------------------
_FILLER_TEXT: dict[str, str] = {
    # Activities: a verb and its object (the verb heads the phrase).
    "VP": """做 红烧肉@obj>1 | 学 英语@obj>1 | 修 电脑@obj>1 | 减肥 | 办 信用卡@obj>1 | 下载 微信@obj>1
        | 申请 护照@obj>1 | 考驾照 | 煮 米饭@obj>1 | 开 网店@obj>1 | 查 快递@obj>1 | 备份 照片@obj>1
        | 戒烟 | 学 编程@obj>1 | 练 书法@obj>1 | 找 工作@obj>1 | 写 简历@obj>1 | 租房子
        | 买 二手车@obj>1 | 种 番茄@obj>1 | 修改 密码@obj>1 | 清理 内存@obj>1 | 转账 | 退款 | 考研
        | 做 蛋糕@obj>1 | 包 饺子@obj>1 | 注册 公司@obj>1 | 开发票 | 打印文件 | 截图
        | 背单词 | 练 口语@obj>1 | 缓解 压力@obj>1 | 预防 感冒@obj>1 | 治疗 失眠@obj>1
        | 提高 睡眠@nmod>3 质量@obj>1 | 连接 蓝牙@nmod>3 耳机@obj>1 | 更换 手机@nmod>3 屏幕@obj>1
        | 注册 微信@nmod>3 账号@obj>1 | 提高 英语@nmod>3 成绩@obj>1 | 学 游泳@obj>1 | 养 金鱼@obj>1
        | 洗 羽绒服@obj>1 | 去除 水垢@obj>1 | 做 家常@nmod>3 豆腐@obj>1 | 存钱
        | 炒青菜 | 学 吉他@obj>1 | 写 论文@obj>1 | 安装 软件@obj>1 | 关闭 自动更新@obj>1
        | 删除 聊天记录@obj>1 | 恢复 出厂@nmod>3 设置@obj>1 | 办理 签证@obj>1 | 预约 挂号@obj>1
        | 提取 公积金@obj>1 | 交 社保@obj>1 | 订机票 | 退 火车票@obj>1 | 学 画画@obj>1""",
    # Things and concepts one asks about.
    "NP": """区块@compound>2 链 | 人工智能 | 信用卡 | 公积金 | 社保 | 高血压 | 比特@compound>2 币 | 基金 | 股票 | 医保 | 房贷
        | 电动车 | 二维码 | 云@nmod>2 存储 | 大@amod>2 数据 | 网络安全 | 会员 | 蓝牙
        | 路由器 | 维生素 | 益生菌 | 散户 | 理财产品 | 手机@nmod>2 内存 | 个人所得税
        | 量子@nmod>2 计算 | 深度@nmod>2 学习 | 新能源@nmod>2 汽车 | 无线网络 | 电子@nmod>2 发票""",
    # Products and things one buys, compares or recommends.
    "NPC": """手机 | 电脑 | 笔记本 | 耳机 | 洗衣机 | 空调 | 冰箱 | 相机 | 汽车 | 奶粉 | 面膜 | 跑鞋 | 键盘
        | 鼠标 | 平板 | 电视 | 手表 | 书包 | 牙膏 | 洗发水 | 电饭煲 | 吸尘器 | 显示器 | 路由器 | 眼镜
        | 蓝牙@nmod>2 耳机 | 游戏@nmod>2 手机 | 机械@nmod>2 键盘 | 运动@nmod>2 手表 | 扫地@nmod>2 机器人""",
    "BRAND": "苹果 | 华为 | 小米 | 三星 | 联想 | 戴尔 | 索尼 | 佳能 | 格力 | 美的 | 海尔 | 耐克",
    "PLACE": "北京 | 上海 | 杭州 | 成都 | 广州 | 深圳 | 西安 | 南京 | 武汉 | 重庆 | 厦门 | 青岛 | 长沙 | 苏州",
    "ADJ": "好 | 便宜 | 好用 | 实用 | 耐用 | 安全 | 划算 | 方便 | 可靠 | 舒服 | 轻便",
    "PERSON": "我 | 你 | 孩子 | 老人 | 学生 | 新手 | 女生 | 男生 | 孕妇 | 上班族 | 我们 | 他",
    "MEDIA": "电影 | 小说 | 电视剧 | 游戏 | 动漫 | 纪录片 | 歌曲 | 综艺 | 书",
}

# ---------------------------------------------------------------------------------------
# Frames: (kind, pattern). Kinds: how-to, what-is, recommendation, yes/no, comparison, wh.
# ---------------------------------------------------------------------------------------
FRAMES: list[tuple[str, str]] = [
    ("how-to", "怎么:2:advmod {VP}:0:root ？:2:punct"),
    ("how-to", "如何:2:advmod {VP}:0:root ？:2:punct"),
    ("how-to", "怎样:2:advmod {VP}:0:root ？:2:punct"),
    ("how-to", "怎么:2:advmod {VP}:0:root"),
    ("how-to", "请问:3:discourse 怎么:3:advmod {VP}:0:root ？:3:punct"),
    ("how-to", "{PERSON}:3:nsubj 怎么:3:advmod {VP}:0:root ？:3:punct"),
    ("how-to", "{PERSON}:4:nsubj 应该:4:aux 怎么:4:advmod {VP}:0:root ？:4:punct"),
    ("how-to", "{PERSON}:2:nsubj 想:0:root {VP}:2:ccomp ，:2:punct 怎么办:2:parataxis ？:2:punct"),
    ("how-to", "{VP}:3:csubj 需要:3:aux 注意:0:root 什么:3:obj ？:3:punct"),
    ("how-to", "{VP}:2:csubj 有:0:root 什么:4:det 技巧:2:obj ？:2:punct"),
    ("how-to", "{VP}:2:csubj 有:0:root 什么:4:det 方法:2:obj 吗:2:discourse:sp ？:2:punct"),
    ("how-to", "{VP}:2:csubj 需要:0:root 多少:4:nmod 钱:2:obj ？:2:punct"),
    ("how-to", "{VP}:2:csubj 需要:0:root 多久:2:obj ？:2:punct"),
    ("how-to", "{VP}:3:acl 的:1:mark 方法:0:root"),
    ("how-to", "{VP}:3:acl 的:1:mark 步骤:5:nsubj 是:5:cop 什么:0:root ？:5:punct"),
    ("how-to", "在:2:case 哪里:4:obl 可以:4:aux {VP}:0:root ？:4:punct"),
    ("how-to", "{PLACE}:4:obl 哪里:4:obl 可以:4:aux {VP}:0:root ？:4:punct"),
    ("how-to", "{PLACE}:3:obl 怎么:3:advmod {VP}:0:root ？:3:punct"),
    ("how-to", "第一次:2:obl:tmod {VP}:0:root 要:4:aux 准备:2:conj 什么:4:obj ？:2:punct"),
    ("what-is", "{NP}:3:nsubj 是:3:cop 什么:0:root ？:3:punct"),
    ("what-is", "什么:3:nsubj 是:3:cop {NP}:0:root ？:3:punct"),
    ("what-is", "{NP}:4:nsubj 是:4:cop 什么:4:det 意思:0:root ？:4:punct"),
    ("what-is", "{NP}:2:nsubj 有:0:root 什么:4:det 用:2:obj ？:2:punct"),
    ("what-is", "{NP}:2:nsubj 有:0:root 什么:4:det 作用:2:obj ？:2:punct"),
    ("what-is", "{NP}:3:nmod 的:1:case 作用:5:nsubj 是:5:cop 什么:0:root 呢:5:discourse:sp"),
    ("what-is", "{NP}:3:nmod 的:1:case 原理:5:nsubj 是:5:cop 什么:0:root ？:5:punct"),
    ("what-is", "{NP}:3:nmod 的:1:case 好处:4:nsubj 有:0:root 哪些:4:obj ？:4:punct"),
    ("what-is", "{NP}:3:nsubj 是:3:cop 怎么回事:0:root ？:3:punct"),
    ("what-is", "{NP}:2:nsubj 属于:0:root 什么:2:obj ？:2:punct"),
    ("what-is", "{NP}:3:nsubj 怎么:3:advmod 用:0:root ？:3:punct"),
    ("what-is", "谁:2:nsubj 发明:0:root 了:2:aux {NP}:2:obj ？:2:punct"),
    ("recommendation", "有:0:root 什么:5:det {ADJ}:5:amod 的:3:mark:rel {NPC}:1:obj 推荐:1:conj 吗:1:discourse:sp ？:1:punct"),
    ("recommendation", "推荐:0:root 一款:3:nummod {NPC}:1:obj"),
    ("recommendation", "推荐:0:root 一下:1:advmod {ADJ}:5:amod 的:3:mark:rel {NPC}:1:obj ？:1:punct"),
    ("recommendation", "求:0:root 推荐:1:xcomp {ADJ}:5:amod 的:3:mark:rel {NPC}:2:obj"),
    ("recommendation", "哪个:2:det {NPC}:4:nsubj 最:4:advmod {ADJ}:0:root ？:4:punct"),
    ("recommendation", "哪款:2:det {NPC}:4:nsubj 比较:4:advmod {ADJ}:0:root ？:4:punct"),
    ("recommendation", "什么:2:det 牌子:4:nmod 的:2:case {NPC}:6:nsubj 比较:6:advmod {ADJ}:0:root ？:6:punct"),
    ("recommendation", "{BRAND}:2:nmod {NPC}:4:dislocated 哪款:4:nsubj {ADJ}:0:root ？:4:punct"),
    ("recommendation", "{PLACE}:2:nsubj 有:0:root 什么:4:det 好吃:2:obj 的:4:mark:rel ？:2:punct"),
    ("recommendation", "{PLACE}:2:nsubj 有:0:root 哪些:4:det 好玩:2:obj 的:4:mark:rel 地方:4:obj ？:2:punct"),
    ("recommendation", "有:0:root 什么:5:det 好看:5:amod 的:3:mark:rel {MEDIA}:1:obj 吗:1:discourse:sp ？:1:punct"),
    ("recommendation", "{PERSON}:2:nsubj 适合:0:root 看:2:xcomp 什么:5:det {MEDIA}:3:obj ？:2:punct"),
    ("recommendation", "{PERSON}:2:nsubj 适合:0:root 用:2:xcomp 什么:5:det {NPC}:3:obj ？:2:punct"),
    ("yes/no", "{NPC}:2:nsubj {ADJ}:0:root 吗:2:discourse:sp ？:2:punct"),
    ("yes/no", "{BRAND}:2:nmod {NPC}:4:nsubj 好:4:advmod {ADJ}:0:root 吗:4:discourse:sp ？:4:punct"),
    ("yes/no", "{PERSON}:3:nsubj 可以:3:aux {VP}:0:root 吗:3:discourse:sp ？:3:punct"),
    ("yes/no", "{PERSON}:3:nsubj 能:3:aux {VP}:0:root 吗:3:discourse:sp ？:3:punct"),
    ("yes/no", "{PERSON}:2:nsubj 适合:0:root {VP}:2:ccomp 吗:2:discourse:sp ？:2:punct"),
    ("yes/no", "{VP}:2:csubj 难:0:root 吗:2:discourse:sp ？:2:punct"),
    ("yes/no", "{VP}:2:csubj 贵不贵:0:root ？:2:punct"),
    ("yes/no", "{NP}:2:nsubj 安全:0:root 吗:2:discourse:sp ？:2:punct"),
    ("yes/no", "{NP}:2:nsubj 可靠:0:root 吗:2:discourse:sp ？:2:punct"),
    ("yes/no", "{NP}:2:nsubj 有:0:root 必要:2:obj 买:3:acl 吗:2:discourse:sp ？:2:punct"),
    ("yes/no", "{PLACE}:3:nsubj 现在:3:advmod 冷:0:root 吗:3:discourse:sp ？:3:punct"),
    ("yes/no", "{VP}:2:csubj 要钱:0:root 吗:2:discourse:sp ？:2:punct"),
    ("yes/no", "网上:3:obl 能:3:aux {VP}:0:root 吗:3:discourse:sp ？:3:punct"),
    ("comparison", "{NPC}:5:dislocated 和:3:cc {NPC}:1:conj 哪个:5:nsubj {ADJ}:0:root ？:5:punct"),
    ("comparison", "{BRAND}:5:dislocated 和:3:cc {BRAND}:1:conj 哪个:5:nsubj {ADJ}:0:root ？:5:punct"),
    ("comparison", "{BRAND}:5:nsubj 比:3:case {BRAND}:5:obl 更:5:advmod {ADJ}:0:root 吗:5:discourse:sp ？:5:punct"),
    ("comparison", "{BRAND}:5:nsubj 还是:3:cc {BRAND}:1:conj 更:5:advmod {ADJ}:0:root ？:5:punct"),
    ("comparison", "{BRAND}:2:nmod {NPC}:5:nsubj 和:4:case {BRAND}:5:obl 比:0:root 怎么样:5:advmod ？:5:punct"),
    ("comparison", "{NP}:3:nsubj 和:3:case {NP}:4:obl 有:0:root 什么:6:det 区别:4:obj ？:4:punct"),
    ("comparison", "{NP}:5:nmod 和:3:cc {NP}:1:conj 的:1:case 区别:0:root"),
    ("comparison", "{PLACE}:6:dislocated 和:3:cc {PLACE}:1:conj 哪个:6:nsubj 更:6:advmod 适合:0:root 生活:6:xcomp ？:6:punct"),
    ("comparison", "{VP}:5:csubj 还是:3:cc {VP}:1:conj 更:5:advmod 难:0:root ？:5:punct"),
    ("wh", "{NPC}:3:nsubj 多少:3:nmod 钱:0:root ？:3:punct"),
    ("wh", "{NPC}:4:nsubj 一般:4:advmod 多少:4:nmod 钱:0:root ？:4:punct"),
    ("wh", "为什么:4:advmod {NPC}:4:nsubj 会:4:aux 发热:0:root ？:4:punct"),
    ("wh", "{NPC}:3:nsubj 为什么:3:advmod 坏:0:root 了:3:aux ？:3:punct"),
    ("wh", "{NPC}:2:nsubj 坏:0:root 了:2:aux 怎么办:2:parataxis ？:2:punct"),
    ("wh", "{PERSON}:5:nsubj 什么:3:det 时候:5:obl:tmod 可以:5:aux {VP}:0:root ？:5:punct"),
    ("wh", "{PLACE}:2:nsubj 有:0:root 多少:4:nummod 人:2:obj ？:2:punct"),
    ("wh", "去:0:root {PLACE}:1:obj 坐:1:conj 什么:5:det 车:3:obj ？:1:punct"),
    ("wh", "哪里:3:obl 可以:3:aux {VP}:0:root ？:3:punct"),
    ("wh", "{PERSON}:3:nsubj 为什么:3:advmod {VP}:0:root 呢:3:discourse:sp ？:3:punct"),
]
FILLERS: dict[str, list[str]] = {category: [s.strip() for s in text.split("|") if s.strip()]
                                 for category, text in _FILLER_TEXT.items()}

_SLOT = re.compile(r"^\{([A-Z][A-Z0-9]*)\}$")


@dataclass(frozen=True)
class Phrase:
    """A filler parsed: words, internal heads (0-based in the phrase, -1 = phrase head), relations."""

    words: tuple[str, ...]
    heads: tuple[int, ...]
    deprels: tuple[str, ...]


def parse_filler(text: str) -> Phrase:
    """Parse ``"蓝牙@nmod>2 耳机"`` into a :class:`Phrase` (exactly one bare head word)."""
    words, heads, rels = [], [], []
    for item in text.split():
        if "@" in item:
            form, spec = item.split("@", 1)
            rel, _, target = spec.rpartition(">")
            if not rel or not target.isdigit():
                raise CourseInputError(f"filler {text!r}: cannot read {item!r} (expected word@rel>k)")
            words.append(form)
            heads.append(int(target) - 1)
            rels.append(rel)
        else:
            words.append(item)
            heads.append(-1)
            rels.append("")
    if heads.count(-1) != 1:
        raise CourseInputError(f"filler {text!r}: needs exactly one bare head word")
    return Phrase(tuple(words), tuple(heads), tuple(rels))


@dataclass(frozen=True)
class Frame:
    """A question pattern with its tree: items are ``(form or {CAT}, 1-based head, relation)``."""

    frame_id: str
    kind: str
    items: tuple[tuple[str, int, str], ...]

    @property
    def slots(self) -> list[str]:
        return [m.group(1) for form, _, _ in self.items if (m := _SLOT.match(form))]


def parse_frame(frame_id: str, kind: str, pattern: str) -> Frame:
    """Parse a frame pattern ``"怎么:2:advmod {VP}:0:root ？:2:punct"``."""
    items = []
    for item in pattern.split():
        parts = item.split(":")
        if len(parts) < 3 or not parts[1].isdigit():
            raise CourseInputError(f"frame {frame_id} {pattern!r}: cannot read {item!r} (expected form:head:rel)")
        items.append((parts[0], int(parts[1]), ":".join(parts[2:])))
    return Frame(frame_id, kind, tuple(items))


def realise(frame: Frame, fillers: dict[str, Phrase], sent_id: str) -> TreebankSentence:
    """Fill ``frame``'s slots (category → phrase, in slot order) and build the validated sentence."""
    # First pass: where each frame item lands, and where its phrase head is.
    starts, head_pos = [], []
    position = 0
    phrases = []
    for form, _, _ in frame.items:
        m = _SLOT.match(form)
        phrase = fillers[m.group(1)] if m else Phrase((form,), (-1,), ("",))
        phrases.append(phrase)
        starts.append(position)
        head_pos.append(position + phrase.heads.index(-1))
        position += len(phrase.words)
    words, heads, rels = [], [], []
    for (_form, head, rel), phrase, start in zip(frame.items, phrases, starts):
        for w, h, r in zip(phrase.words, phrase.heads, phrase.deprels):
            words.append(w)
            if h == -1:  # the phrase head takes the frame's arc
                heads.append(-1 if head == 0 else head_pos[head - 1])
                rels.append(rel)
            else:
                heads.append(start + h)
                rels.append(r)
    return make_sentence(sent_id, words, heads, rels, text="".join(words),
                         source=f"question_grammar {frame.frame_id}",
                         comments=[("frame", frame.frame_id), ("kind", frame.kind)])


def frames() -> list[Frame]:
    """All frames, with ids ``f01``, ``f02``, ... in source order."""
    return [parse_frame(f"f{i:02d}", kind, pattern) for i, (kind, pattern) in enumerate(FRAMES, start=1)]


@dataclass
class GrammarReport:
    """What :func:`generate` made and what it rejected (and why)."""

    generated: int = 0
    kept: int = 0
    rejected_segmentation: int = 0
    excluded: int = 0
    per_frame_kept: dict[str, int] = field(default_factory=dict)
    examples_rejected: list[str] = field(default_factory=list)


def generate(per_frame: int = 60, seed: int = 0, exclude: Iterable[str] = ()) -> tuple[list[TreebankSentence], GrammarReport]:
    """Generate up to ``per_frame`` sentences per frame whose jieba words match the grammar's.

    Combinations of fillers are drawn without replacement with a seeded RNG; a sentence
    whose jieba segmentation differs from the grammar's words is rejected and counted.
    Texts in ``exclude`` (e.g. the hand-written treebank) are skipped and counted.

    Returns:
        ``(sentences, report)``; sentence ids are ``tpl-<frame>-<n>``.
    """
    from lessons_lib.syntax.segmentation import segment

    rng = random.Random(seed)
    parsed = {cat: [parse_filler(f) for f in items] for cat, items in FILLERS.items()}
    report = GrammarReport()
    out: list[TreebankSentence] = []
    seen: set[str] = set()
    excluded = set(exclude)
    for frame in frames():
        pools = [parsed[cat] for cat in frame.slots]
        combos = list(itertools.product(*[range(len(p)) for p in pools]))
        rng.shuffle(combos)
        kept = 0
        for combo in combos:
            if kept >= per_frame:
                break
            chosen = [pool[k] for pool, k in zip(pools, combo)]
            if len(frame.slots) >= 2 and len({c.words for c in chosen}) < len(chosen):
                continue  # "A and A" comparisons are not questions anyone asks
            # Slots are filled in order; a category may appear twice, so map by position.
            sentence = _realise_positional(frame, chosen, f"tpl-{frame.frame_id}-{kept + 1:03d}")
            if sentence.text in seen:
                continue
            if sentence.text in excluded:
                report.excluded += 1
                continue
            report.generated += 1
            if segment(sentence.text) != list(sentence.words):
                report.rejected_segmentation += 1
                if len(report.examples_rejected) < 20:
                    report.examples_rejected.append(
                        f"{' '.join(sentence.words)}  ≠ jieba: {' '.join(segment(sentence.text))}")
                continue
            seen.add(sentence.text)
            out.append(sentence)
            kept += 1
        report.per_frame_kept[frame.frame_id] = kept
    report.kept = len(out)
    return out, report


def _realise_positional(frame: Frame, chosen: list[Phrase], sent_id: str) -> TreebankSentence:
    """Like :func:`realise`, but the ``k``-th slot gets ``chosen[k]`` (a category may repeat)."""
    it = iter(chosen)
    items = []
    mapping: dict[str, Phrase] = {}
    for index, (form, head, rel) in enumerate(frame.items):
        if _SLOT.match(form):
            key = f"S{index}"
            mapping[key] = next(it)
            items.append(("{" + key + "}", head, rel))
        else:
            items.append((form, head, rel))
    renamed = Frame(frame.frame_id, frame.kind, tuple(items))
    return realise(renamed, mapping, sent_id)
