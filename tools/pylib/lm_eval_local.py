"""lm-eval reads its datasets through datasets.load_dataset(path, name); the reference
scripts answer those calls with local rows instead (no network), through one patch."""

# lm-eval 0.4's dataset_path / dataset_name of each task folder of tests/fixtures/data.
LM_EVAL_DATASETS = {
    ("allenai/ai2_arc", "ARC-Easy"): "arc_easy", ("allenai/ai2_arc", "ARC-Challenge"): "arc_challenge",
    ("aps/super_glue", "boolq"): "boolq", ("super_glue", "boolq"): "boolq",
    ("Rowan/hellaswag", None): "hellaswag", ("EleutherAI/lambada_openai", "default"): "lambada_openai",
    ("allenai/openbookqa", "main"): "openbookqa", ("baber/piqa", None): "piqa",
    ("allenai/social_i_qa", None): "social_iqa", ("lighteval/siqa", None): "social_iqa",
    ("social_i_qa", None): "social_iqa",
    ("allenai/winogrande", "winogrande_xl"): "winogrande",
}

_real_load_dataset = None


def task_of_dataset(path, name):
    """Our task folder for lm-eval's (dataset_path, dataset_name); KeyError if none."""
    task = LM_EVAL_DATASETS.get((path, name)) or LM_EVAL_DATASETS.get((path, None))
    if task is None:
        raise KeyError("no local data for %r %r" % (path, name))
    return task


def json_dataset(path):
    """A JSONL file as datasets reads it (the real load_dataset, also once patched)."""
    import datasets
    load = _real_load_dataset or datasets.load_dataset
    return load("json", data_files={"data": path})["data"]


def install_local_datasets(splits_for):
    """Patches datasets.load_dataset: splits_for(path, name) returns {split: datasets.Dataset},
    which lm-eval then receives as a DatasetDict."""
    global _real_load_dataset
    import datasets
    if _real_load_dataset is None:
        _real_load_dataset = datasets.load_dataset

    def local(path=None, name=None, **kwargs):
        return datasets.DatasetDict(splits_for(path, name))
    datasets.load_dataset = local
