#!/usr/bin/env python3
"""Task fixtures: synthetic canonical rows for the nine tasks, and what REAL lm-eval makes of them.

Writes
  tests/fixtures/data/<task>/<split>.jsonl     rows in the Hugging Face schema lm-eval reads
                                               (authored here; edge cases on purpose)
  tests/fixtures/tasks/<task>.expected.jsonl   per doc: lm-eval's request arguments
                                               [[context, continuation], ...], gold (-100 when
                                               no choice is right) and choice lengths for acc_norm
  tests/fixtures/data/original/<taskdir>/...  the same rows in the original authors' formats,
                                               and expected/<task>.jsonl: what the adapters
                                               must turn them into
  tests/fixtures/tasks/lm_eval_version.txt     the lm-eval version that produced them
  tests/fixtures/tasks/pystr_cases.jsonl       Python str results for tricky strings
  tests/fixtures/tasks/pystr_case_map.tsv      cp, title(cp), lower(cp) for every code point
                                               whose case changes

The task objects are lm-eval's own (TaskManager, the shipped YAMLs and utils); only
datasets.load_dataset is replaced so that it reads the local JSONL. Gold comes from lm-eval's
process_results: with fake log-likelihoods that make choice i the argmax, acc == 1 iff gold == i.

    pip install lm-eval==0.4.12     # or: pip install --no-deps --target DIR lm-eval==0.4.12
    PYTHONPATH=DIR python3 tools/make_task_fixtures.py
"""
import json
import os
import sys
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "fixtures", "data")
OUT = os.path.join(ROOT, "tests", "fixtures", "tasks")

SPLIT = {"arc_easy": "test", "arc_challenge": "test", "boolq": "validation",
         "hellaswag": "validation", "lambada_openai": "test", "openbookqa": "test",
         "piqa": "validation", "social_iqa": "validation", "winogrande": "validation"}


def arc(i, q, texts, key, labels=None):
    labels = labels or "ABCDE"[:len(texts)]
    return {"id": "Synth_%d" % i, "question": q,
            "choices": {"text": list(texts), "label": list(labels)}, "answerKey": key}


ARC_EASY = [
    arc(1, "Which object in the sky gives off its own light?",
        ["the Moon", "the Sun", "Venus", "Mars"], "B"),
    arc(2, "What do plants need from the air to make food?",
        ["oxygen", "nitrogen", "carbon dioxide", "helium"], "C"),
    arc(3, "Water freezes at what temperature in degrees Celsius?",
        ["0", "32", "100", "-40"], "1", labels=["1", "2", "3", "4"]),
    arc(4, "Which tool measures mass?", ["a balance", "a ruler", "a thermometer"], "A"),
    arc(5, "Which of these is a mammal?",
        ["shark", "frog", "whale", "salmon", "lizard"], "C"),
    arc(6, "A café sells crème brûlée. Which state of matter is the caramel top?",
        ["solid", "liquid", "gas", "plasma"], "A"),
    arc(7, "Which unit is used for electric current?  ",
        ["ampère", "volt", "ohm", "watt"], "A"),
    arc(8, "What is H\u2082O commonly called?", ["water", "salt", "sugar", "sand"], "A"),
    arc(9, "Which sense does the ear provide?",
        [" hearing", "sight ", "smell", "taste"], "A"),
    arc(10, "Which planet is known as the red planet? \U0001F534",
        ["Earth", "Mars \U0001F680", "Jupiter", "Saturn"], "B"),
    arc(11, "Which layer of Earth is the thinnest?",
        ["crust", "mantle", "outer core", "inner core"], "4", labels=["1", "2", "3", "4"]),
    arc(12, "An answer key that is past the end of the text list gives gold -100:",
        ["first", "second", "third"], "D", labels=["A", "B", "C", "D"]),
    arc(13, "What   gas do   animals breathe out?",
        ["carbon dioxide", "carbon dioxide", "argon", "neon"], "B"),
    arc(14, "Ünïcödé question with tab\there?", ["naïve", "façade", "über", "jalapeño"], "D"),
]

ARC_CHALLENGE = [
    arc(101, "Which process in the water cycle forms clouds?",
        ["evaporation", "condensation", "precipitation", "runoff"], "B"),
    arc(102, "A student heats 50 mL of water. Which property stays the same?",
        ["temperature", "volume", "mass", "density"], "C"),
    arc(103, "Which change is a chemical change?",
        ["ice melting", "paper burning", "glass breaking"], "B"),
    arc(104, "Which organelle releases energy from food?",
        ["nucleus", "ribosome", "mitochondrion", "vacuole", "cell wall"], "C"),
    arc(105, "Which force keeps the planets in orbit around the Sun?",
        ["magnetism", "friction", "gravity", "tension"], "3", labels=["1", "2", "3", "4"]),
    arc(106, "What does a food web show?",
        ["how energy flows", "how rocks form", "how wind blows", "how light bends"], "A"),
    arc(107, "Why do astronauts float in orbit?",
        ["no gravity", "free fall", "no air", "magnets"], "B"),
    arc(108, "Which is the best conductor of heat?",
        ["wood", "plastic", "copper", "rubber"], "C"),
    arc(109, "Sound travels fastest through which medium?",
        ["air", "water", "steel", "vacuum"], "C"),
    arc(110, "Which trait is learned rather than inherited?",
        ["eye colour", "speaking French", "blood type", "hair colour"], "B"),
    arc(111, "Which describes a physical property of a mineral?\u00a0",
        ["hardness", "reactivity", "flammability", "toxicity"], "A"),
    arc(112, "Which is a renewable resource?", ["coal", "oil", "sunlight", "natural gas"], "C"),
]


def boolq(i, title, passage, question, label):
    return {"question": question, "passage": title + " -- " + passage, "idx": i, "label": label}


BOOLQ = [
    boolq(0, "Persian language", "Persian, also known by its endonym Farsi, is a Western Iranian "
          "language belonging to the Iranian branch of the Indo-Iranian subdivision.",
          "do iran and afghanistan speak the same language", 1),
    boolq(1, "Ethanol fuel", "All biomass goes through at least some of these steps: it needs to be "
          "grown, collected, dried, fermented, distilled, and burned.",
          "does ethanol take more energy make that produces", 0),
    boolq(2, "Barcelona", "Barcelona is a city on the coast of northeastern Spain.",
          "is barcelona the capital of spain", 0),
    boolq(3, "Ōsaka", "Ōsaka is a designated city in the Kansai region of Honshu in Japan.",
          "is osaka in the kansai region", 1),
    boolq(4, "Tea", "Tea is an aromatic beverage prepared by pouring hot water over cured leaves.  ",
          "is tea made with hot water", 1),
    boolq(5, "Moon", "The Moon is Earth's only natural satellite.\nIt orbits at an average distance "
          "of 384,400 km.", "is the moon a planet", 0),
    boolq(6, "Great Wall of China", "The Great Wall of China is a series of fortifications built "
          "across the historical northern borders of ancient Chinese states.",
          "can you see the great wall of china from space", 0),
    boolq(7, "Penguin", "Penguins are a group of aquatic flightless birds living almost exclusively "
          "in the Southern Hemisphere.", "can penguins fly", 0),
    boolq(8, "Mount Everest", "Mount Everest is Earth's highest mountain above sea level.",
          "is mount everest the tallest mountain above sea level", 1),
    boolq(9, "Label out of range", "A synthetic row whose label is 2, which lm-eval treats as no "
          "right answer.", "is this label valid", 2),
    boolq(10, "Coffee", "Coffee is a drink prepared from roasted coffee beans.",
          "is coffee made from beans ", 1),
    boolq(11, "Rhône", "The Rhône is a major river in France and Switzerland, rising in the Alps.",
          "does the rhône flow through switzerland", 1),
]


def hs(i, act, ctx_a, ctx_b, endings, label, src="activitynet~v_x"):
    ctx = ctx_a + " " + ctx_b if ctx_b else ctx_a
    return {"ind": i, "activity_label": act, "ctx_a": ctx_a, "ctx_b": ctx_b, "ctx": ctx,
            "endings": endings, "source_id": src, "split": "val", "split_type": "indomain",
            "label": label}


HELLASWAG = [
    hs(1, "Roof shingle removal", "A man is sitting on a roof.", "he",
       ["is using wrap to wrap a pair of skis.", "is ripping level tiles off.",
        "is holding a rubik's cube.", "starts pulling up roofing on a roof."], "3"),
    hs(2, "Clean and jerk", "A lady walks to a barbell. She bends down and grabs the pole.", "the lady",
       ["swings and lands in her arms.", "pulls the barbell forward.",
        "pulls a rope attached to the barbell.", "stands and lifts the weight over her head."], "3"),
    hs(3, "Personal Care and Style", "[header] How to dye your hair [title] Buy a dye kit. [step] "
       "Pick a shade close to your natural colour.", "",
       ["[substeps] Read the box carefully.", "[title] Rinse your hair [step] Use cold water.",
        "Paint the walls  of the room.", "[step] Wash the dog."], "0", src="wikihow~1"),
    hs(4, "Kite flying", "A boy runs across a field holding a string.", "THE KITE",
       [" rises into the sky. ", "falls   into a lake.", "eats a sandwich.", "sings a song."], "0"),
    hs(5, "Cooking", "A chef chops onions on a board.", "ǆemal then",
       ["adds them to a pan.", "throws them away.", "paints them blue.", "ignores them."], "0"),
    hs(6, "Street walking", "People walk down a street in Germany.", "ßtraßenbahn passes and",
       ["everyone waves.", "the tram stops.", "a dog barks.", "it rains."], "1"),
    hs(7, "Travel", "A woman points at a map of Turkey.", "İstanbul IS",
       ["her destination.", "a country.", "a recipe.", "a shoe."], "0"),
    hs(8, "Greek dance", "Dancers form a circle.", "ΟΔΟΣ ΚΑΙ ΧΟΡΟΣ",
       ["begins slowly.", "ends abruptly.", "is painted.", "swims away."], "0"),
    hs(9, "Brackets", "Text with [an unclosed bracket and [a nested [one] here] end.", "then",
       ["[a\nb] stays because the regex stops at newlines.", "keeps ]stray[ brackets.",
        "drops [x][y] both.", "mixes [title]one."], "2"),
    hs(10, "Whitespace\u2003", "\u00a0Leading and trailing unicode spaces.\u3000", "the end\u2002",
       ["\u2009thin space ending.\u200a", "plain ending.", "two  spaces   three.", "tab\tending."], "1"),
    hs(11, "Label out of range", "The label of this row is 4.", "so",
       ["no choice is right.", "none.", "nothing.", "nil."], "4"),
    hs(12, "Label with a space", "The label of this row is ' 2'.", "which",
       ["is not isdigit.", "so lm-eval looks it up.", "among the choices.", "and gives -100."], " 2"),
    hs(13, "Title case", "Someone writes a title.", "ǈetters AND ǋumbers",
       ["follow.", "stop.", "wait.", "go."], "2"),
    hs(14, "Capitalized", "A man plays the guitar.", "'S friend",
       ["claps along.", "leaves.", "sleeps.", "cries."], "0"),
    hs(15, "Numbers", "A scoreboard shows the result.", "3 GOALS to",
       ["one.", "two.", "three.", "none."], "1"),
]

LAMBADA = [
    {"text": "In my palm is a clear stone, and inside it is a small ivory statuette. A guardian "
             "angel.\n\n\"Figured if you're going to be out at night getting hit by cars, you might "
             "as well have some backup.\"\n\nI look at him, feeling stunned. Like this is some sort "
             "of sign. But as I stare at Harlin, his mouth curved in a confident grin, I don't care "
             "about signs"},
    {"text": "She opened the door and called for the dog. The dog came running across the yard, "
             "tail wagging. She bent down and hugged the"},
    {"text": "The train was late again. Marco checked his watch, sighed, and sat down on the "
             "bench. When it finally arrived, he boarded the"},
    {"text": "two spaces before the last  word"},
    {"text": "three spaces   ending"},
    {"text": "trailing space at the end "},
    {"text": "oneword"},
    {"text": "Ünïcödé text ends with café"},
    {"text": "A line\nbreak before the last word\nhere"},
    {"text": "Tab\tseparated\tends\twith space then word"},
    {"text": "\"Come back,\" she said. \"Please, come back to"},
    {"text": "He paid with a \u00a0non-breaking space before the word"},
]


def obqa(i, stem, texts, key):
    return {"id": "obqa-%d" % i, "question_stem": stem,
            "choices": {"text": texts, "label": ["A", "B", "C", "D"]}, "answerKey": key}


OPENBOOKQA = [
    obqa(1, "There is most likely going to be fog around:",
         ["a marsh", "a tundra", "the plains", "a desert"], "A"),
    obqa(2, "A person wants to start saving money so that they can afford a nice vacation at the "
         "end of the year. After looking over their budget and expenses, they decide the best way "
         "to save money is to", ["make more phone calls", "quit eating lunch out",
                                 "buy less with monopoly money", "have lunch with friends"], "B"),
    obqa(3, "Predators eat ", ["lions", "humans", "bunnies", "grass"], "C"),
    obqa(4, "Oak tree seeds are planted and a sidewalk is paved right next to that spot, until "
         "eventually, the tree is tall and the roots must extend past the sidewalk, which means",
         ["roots may be split", "roots may begin to die", "parts may break the concrete",
          "roots may fall apart"], "C"),
    obqa(5, "An electric car runs on electricity via", ["gasoline", "a power station",
                                                        "electrical conductors", "fuel"], "C"),
    obqa(6, "The key has a leading space", ["first", "second", "third", "fourth"], " D"),
    obqa(7, "The stem ends with a tab\t", ["one", "two", "three", "four"], "B"),
    obqa(8, "Stem ending with an ideographic space\u3000", ["un", "deux", "trois", "quatre"], "A"),
    obqa(9, "Which is warmest in July in São Paulo?", ["the beach", "the café", "the fridge",
                                                        "the freezer"], "A"),
    obqa(10, "The sun is responsible for", ["puppies learning new tricks",
                                            "children growing up and getting old",
                                            "flowers wilting in a vase", "plants sprouting, blooming and wilting"], "D"),
    obqa(11, "Stem with a newline\n", ["yes", "no", "maybe", "never"], "B"),
    obqa(12, "What is 2 + 2?", ["3", "4", "5", "22"], "B"),
]


def piqa(goal, s1, s2, label):
    return {"goal": goal, "sol1": s1, "sol2": s2, "label": label}


PIQA = [
    piqa("How do I ready a guinea pig cage for it's new occupants?",
         "Provide the guinea pig with a cage full of a few inches of bedding made of ripped paper "
         "strips, you will also need to supply it with a water bottle and a food dish.",
         "Provide the guinea pig with a cage full of a few inches of bedding made of ripped jeans "
         "material, you will also need to supply it with a water bottle and a food dish.", 0),
    piqa("dresser", "replace drawer with bobby pin ", "finish, woodgrain with  bobby pin ", 1),
    piqa("To keep bread fresh longer,", "store it in a sealed bag.", "leave it in the sun.", 0),
    piqa("How to cool soup quickly?", "Put the pot in an ice bath and stir.",
         "Put the pot in a warm oven.", 0),
    piqa("Remove a stripped screw", "Use a rubber band between the driver and the screw.",
         "Use a banana between the driver and the screw.", 0),
    piqa("Make a café au lait", "Mix hot coffee with steamed milk.", "Mix hot coffee with sand.", 0),
    piqa("Open a stuck jar lid", "Tap the lid with a spoon to break the seal.",
         "Tap the lid with a feather to break the seal.", 0),
    piqa("To water a plant", "pour water into a sieve over the plant.",
         "pour water into the pot at the base of the plant.", 1),
    piqa("How to dry wet shoes?", "Stuff them with newspaper.", "Stuff them with wet towels.", 0),
    piqa("Clean a whiteboard", "Wipe it with a dry eraser.", "Wipe it with permanent marker.", 0),
    piqa("Goal ending with spaces   ", "sol one", "sol two\u00a0", 1),
    piqa("Light a candle", "Hold a lit match to the wick.", "Hold an ice cube to the wick.", 0),
]


def siqa(ctx, q, a, b, c, label):
    return {"context": ctx, "question": q, "answerA": a, "answerB": b, "answerC": c, "label": label}


SIQA = [
    siqa("Tracy didn't go home that evening and resisted Riley's attacks.",
         "What does Tracy need to do before this?", "make a new plan", "Go home and see Riley",
         "Find somewhere to go", "3\n"),
    siqa("Sydney walked past a homeless woman asking for change but did not have any money they "
         "could give to her. Sydney felt bad afterwards.", "How would you describe Sydney?",
         "sympathetic", "like a person who was unable to help", "incredulous", "1\n"),
    siqa("Sasha protected the patients' rights by making new laws regarding cancer drug trials.",
         "What will patients want to do next?", "write new laws", "get petitions signed",
         "live longer", "3"),
    siqa("Jordan was in charge of taking the food on the camping trip.", "How would Jordan feel "
         "afterwards?", "horrible that he let his friends down", "happy that he had the food",
         "tired", "1"),
    siqa("Kendall opened their mouth to speak and what came out shocked everyone.",
         "How would you describe Kendall?", "a very quiet person", "a very passive person",
         "a very aggressive and talkative person", "3"),
    siqa("Aubrey never told Riley the answer.", "Why did Aubrey do this?", "keep a secret",
         "help Riley", "forget", "2"),
    siqa("Remy gave Jesse a café crème.", "What will Jesse want to do next?", "drink it",
         "throw it", "sell it", "1"),
    siqa("Label four is past the choices.", "What happens?", "a", "b", "c", "4"),
    siqa("Label zero becomes -1.", "What happens?", "x", "y", "z", "0"),
    siqa("Quinn wanted to help me clean my room up because it was so messy.",
         "What will Quinn want to do next?", "Eat messy snacks", "help out a friend",
         "Pick up the dirty clothes", "3"),
    siqa("Context ending with space ", "question ending with space ", "one", "two", "three", "2\n"),
    siqa("Cameron decided to have a barbecue and gathered her friends together.",
         "How would Others feel as a result?", "like attending", "like staying home",
         "a good friend to have", "1"),
]


def wg(sentence, o1, o2, answer):
    return {"sentence": sentence, "option1": o1, "option2": o2, "answer": answer}


WINOGRANDE = [
    wg("Sarah was a much better surgeon than Maria so _ always got the easier cases.",
       "Sarah", "Maria", "2"),
    wg("Sarah was a much better surgeon than Maria so _ always got the harder cases.",
       "Sarah", "Maria", "1"),
    wg("They were worried the wine would ruin the bed and the blanket, but the _ was't ruined.",
       "blanket", "bed", "2"),
    wg("The trophy doesn't fit into the brown suitcase because the _ is too large.",
       "trophy", "suitcase", "1"),
    wg("The trophy doesn't fit into the brown suitcase because the _ is too small.",
       "trophy", "suitcase", "2"),
    wg("Ian volunteered to eat Dennis's menudo after already having a bowl because _ despised "
       "eating intestine.", "Ian", "Dennis", "2"),
    wg("He never comes to my home, but I always go to his house because the _ is smaller.",
       "home", "house", "1"),
    wg("The punctuation-only tail follows the _.", "blank", "gap", "1"),
    wg("Trailing spaces after the _ word   ", "first", "second", "2"),
    wg("Zoë liked the café more than the bar because the _ served better coffee.",
       "café", "bar", "1"),
    wg("Two blanks: _ and _ again.", "one", "two", "1"),
    wg("Unicode space after _\u00a0tail\u3000", "this", "that", "2"),
]

TASKS = {"arc_easy": ARC_EASY, "arc_challenge": ARC_CHALLENGE, "boolq": BOOLQ,
         "hellaswag": HELLASWAG, "lambada_openai": LAMBADA, "openbookqa": OPENBOOKQA,
         "piqa": PIQA, "social_iqa": SIQA, "winogrande": WINOGRANDE}


def write_jsonl(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def install_local_loader(paths):
    """Makes datasets.load_dataset(path, name) read our local JSONL for every split."""
    import datasets
    real = datasets.load_dataset
    current = {}

    def fake(path=None, name=None, **kwargs):
        task = current["task"]
        ds = real("json", data_files={"data": paths[task]})["data"]
        return datasets.DatasetDict({"train": ds, "validation": ds, "test": ds})

    datasets.load_dataset = fake
    return current


def dump_task(task, out_path):
    """Runs lm-eval's own request construction and scoring code over the local rows."""
    docs = []
    instances = {}
    for inst in task.instances:
        instances.setdefault(inst.doc_id, []).append(inst)
    for doc_id in sorted(instances):
        insts = sorted(instances[doc_id], key=lambda x: x.idx)
        doc = insts[0].doc
        reqs = [list(x.arguments) for x in insts]
        rec = {"doc_id": doc_id, "requests": reqs}
        if task.OUTPUT_TYPE == "multiple_choice":
            choices = task.doc_to_choice(doc)
            rec["choice_len"] = [len(c) for c in choices]
            gold = -100
            for i in range(len(insts)):
                fake = [(0.0 if j == i else -1.0, j == i) for j in range(len(insts))]
                if task.process_results(doc, fake)["acc"] == 1.0:
                    gold = i
            rec["gold"] = gold
        else:
            rec["gold"] = 0
            rec["choice_len"] = [len(reqs[0][1]) - 1]
        docs.append(rec)
    with open(out_path, "w", encoding="utf-8") as f:
        for r in docs:
            f.write(json.dumps(r, ensure_ascii=True) + "\n")
    return len(docs)


def pystr_fixtures():
    cases = ["", " ", "abc", "  a b  ", "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f x \x85\xa0",
             "\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
             "\u2028\u2029\u202f\u205f\u3000mid\u3000", "\u200b zero width is not space \u200b",
             "\ufeffbom", "ǆemal", "ǈetters AND ǋumbers", "ßtraße", "İstanbul IS", "aİb",
             "ΟΔΟΣ ΚΑΙ ΧΟΡΟΣ", "ΣΑΣ", "Σ", "aΣ", "aΣb", "aΣ.", "a.Σ", "Σa", "AΣ'Σ", "ﬁne ﬂow",
             "ŉ", "ǰ", "ΐ", "ᾳ ᾲ", "'S friend", "3 GOALS", "ÉCOLE", "\U0001F600 Smile",
             "ＡＢＣ", "Ⓐⓑ", "ǅ", "Ǆ", "ᲀ", "\u0345x", "x\u0345Σ", "Ꭰꭰ", "𐐀𐐨",
             "\u00a0lead", "tail\u2003", "🙂ΣΣ"]
    out = []
    for s in cases:
        out.append({"s": s, "len": len(s), "strip": s.strip(), "rstrip": s.rstrip(),
                    "lstrip": s.lstrip(), "capitalize": s.capitalize()})
    with open(os.path.join(OUT, "pystr_cases.jsonl"), "w", encoding="utf-8") as f:
        for r in out:
            f.write(json.dumps(r, ensure_ascii=True) + "\n")
    with open(os.path.join(OUT, "pystr_case_map.tsv"), "w") as f:
        f.write("# cp\ttitle\tlower (hex code points, space separated); Python %s, Unicode %s\n"
                % (sys.version.split()[0], unicodedata.unidata_version))
        for c in range(sys.maxunicode + 1):
            if 0xD800 <= c <= 0xDFFF:
                continue
            ch = chr(c)
            t, lo = ch.title(), ch.lower()
            if t != ch or lo != ch:
                f.write("%X\t%s\t%s\n" % (c, " ".join("%X" % ord(x) for x in t),
                                          " ".join("%X" % ord(x) for x in lo)))


def write_originals():
    """Original-author layouts (as in ../shared/benchdata/<taskdir>/) made from the synthetic
    rows, plus the canonical rows the adapters must turn them back into (expected/<task>.jsonl).
    Rows an original format cannot hold (ARC text/label lists of unequal length) are left out."""
    import bz2
    base = os.path.join(DATA, "original")
    exp = {}

    def qc(rows, stem_key):
        out, keep = [], []
        for r in rows:
            ch = r["choices"]
            if len(ch["text"]) != len(ch["label"]):
                continue
            out.append({"id": r["id"], "question": {"stem": r[stem_key], "choices": [
                {"text": t, "label": l} for t, l in zip(ch["text"], ch["label"])]},
                "answerKey": r["answerKey"]})
            keep.append(r)
        return out, keep

    o, exp["arc_easy"] = qc(ARC_EASY, "question")
    write_jsonl(os.path.join(base, "arc_easy", "ARC-Easy-Test.jsonl"), o)
    o, exp["arc_challenge"] = qc(ARC_CHALLENGE, "question")
    write_jsonl(os.path.join(base, "arc_challenge", "ARC-Challenge-Test.jsonl"), o)
    o, exp["openbookqa"] = qc(OPENBOOKQA, "question_stem")
    write_jsonl(os.path.join(base, "openbookqa", "test.jsonl"), o)
    # BoolQ, Google's dev.jsonl: the passage without its "Title -- " prefix.
    o = []
    for r in BOOLQ[:8]:
        title, passage = r["passage"].split(" -- ", 1)
        o.append({"question": r["question"], "title": title, "answer": r["label"] == 1,
                  "passage": passage})
    write_jsonl(os.path.join(base, "boolq", "dev.jsonl"), o)
    exp["boolq"] = BOOLQ[:8]
    # SuperGLUE's val.jsonl: label true/false.
    write_jsonl(os.path.join(base, "boolq_superglue", "val.jsonl"),
                [{"question": r["question"], "passage": r["passage"], "idx": r["idx"],
                  "label": r["label"] == 1} for r in BOOLQ[:8]])
    # HellaSwag original JSONL (int label) and the 6-line text dump (bz2).
    write_jsonl(os.path.join(base, "hellaswag", "hellaswag_val.jsonl"),
                [dict(r, label=int(r["label"])) for r in HELLASWAG[:11]])
    exp["hellaswag"] = [dict(r) for r in HELLASWAG[:11]]
    from lm_eval.tasks.hellaswag.utils import preprocess
    lines, hexp = [], []
    for r in HELLASWAG[:6]:
        q = preprocess(r["activity_label"] + ": " + r["ctx"])  # a third party's text: no capitalize
        ends = [preprocess(e) for e in r["endings"]]
        lines += [q, r["label"]] + ends
        hexp.append({"query": q, "choices": ends, "gold": int(r["label"]), "preprocessed": True})
    os.makedirs(os.path.join(base, "hellaswag_text"), exist_ok=True)
    with bz2.open(os.path.join(base, "hellaswag_text", "hellaswag_val_full.txt.bz2"), "wt",
                  encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    exp["hellaswag_text"] = hexp
    write_jsonl(os.path.join(base, "lambada_openai", "lambada_test.jsonl"), LAMBADA)
    exp["lambada_openai"] = LAMBADA
    write_jsonl(os.path.join(base, "piqa", "valid.jsonl"),
                [{"goal": r["goal"], "sol1": r["sol1"], "sol2": r["sol2"]} for r in PIQA])
    with open(os.path.join(base, "piqa", "valid-labels.lst"), "w") as f:
        f.write("".join("%d\n" % r["label"] for r in PIQA))
    exp["piqa"] = PIQA
    write_jsonl(os.path.join(base, "siqa", "dev.jsonl"),
                [{k: r[k] for k in ("context", "question", "answerA", "answerB", "answerC")}
                 for r in SIQA])
    with open(os.path.join(base, "siqa", "dev-labels.lst"), "w") as f:
        f.write("".join(r["label"].strip() + "\n" for r in SIQA))
    exp["social_iqa"] = [dict(r, label=r["label"].strip()) for r in SIQA]
    write_jsonl(os.path.join(base, "winogrande", "dev.jsonl"),
                [dict(r, qID="q%d" % i) if i % 2 else dict(r) for i, r in enumerate(WINOGRANDE)])
    with open(os.path.join(base, "winogrande", "dev-labels.lst"), "w") as f:
        f.write("".join(r["answer"] + "\n" for r in WINOGRANDE))
    exp["winogrande"] = WINOGRANDE
    for name, rows in exp.items():
        write_jsonl(os.path.join(base, "expected", name + ".jsonl"), rows)


def check_lm_eval_refuses(tm, current):
    """Rows the C builders refuse must be rows lm-eval itself crashes on (test_tasks.c error_rows)."""
    import datasets
    bad = {
        "arc_easy": {"id": "x", "question": "q", "choices": {"text": ["a", "b"], "label": ["A", "B"]},
                     "answerKey": "E"},
        "winogrande": {"sentence": "a _ b", "option1": "x", "option2": "y", "answer": "3"},
    }
    for name, doc in bad.items():
        current["task"] = name
        task = tm.load_task_or_group([name])[name]
        try:
            task.doc_to_text(doc) if name == "winogrande" else task.doc_to_target(doc)
        except (ValueError, KeyError):
            continue
        raise SystemExit("lm-eval accepted a row we refuse: %s %r" % (name, doc))
    from lm_eval.tasks.hellaswag.utils import process_docs
    for label in ("x", ""):
        row = dict(HELLASWAG[0], label=label)
        try:
            process_docs(datasets.Dataset.from_list([row]))
        except ValueError:
            continue
        raise SystemExit("lm-eval accepted hellaswag label %r" % label)
    current["task"] = "hellaswag"
    task = tm.load_task_or_group(["hellaswag"])["hellaswag"]
    doc = process_docs(datasets.Dataset.from_list([dict(HELLASWAG[0], label="3")]))[0]
    doc["label"] = "03"  # int("03") passes process_docs; literal_eval("03") fails in doc_to_target
    try:
        task.doc_to_target(doc)
        raise SystemExit("lm-eval accepted hellaswag label '03'")
    except SyntaxError:
        pass
    print("lm-eval raises on every row the C builders refuse")


def main():
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.makedirs(OUT, exist_ok=True)
    paths = {}
    for name, rows in TASKS.items():
        p = os.path.join(DATA, name, SPLIT[name] + ".jsonl")
        write_jsonl(p, rows)
        paths[name] = p
    pystr_fixtures()
    write_originals()

    import lm_eval
    from lm_eval.tasks import TaskManager
    version = getattr(lm_eval, "__version__", None)
    if version is None:
        from importlib.metadata import version as v
        version = v("lm_eval")
    current = install_local_loader(paths)
    tm = TaskManager()
    for name in TASKS:
        current["task"] = name
        loaded = tm.load_task_or_group([name])
        task = loaded[name] if name in loaded else list(loaded.values())[0]
        task.set_config("num_fewshot", 0) if hasattr(task, "set_config") else None
        task.build_all_requests(limit=None, rank=0, world_size=1)
        n = dump_task(task, os.path.join(OUT, name + ".expected.jsonl"))
        print("%-15s %3d docs" % (name, n))
    check_lm_eval_refuses(tm, current)
    with open(os.path.join(OUT, "lm_eval_version.txt"), "w") as f:
        f.write("lm-eval %s, Python %s\n" % (version,
                                                  sys.version.split()[0]))


if __name__ == "__main__":
    main()
