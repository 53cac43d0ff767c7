"""The Hugging Face export, read by the real ``datasets`` library (offline)."""

from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile

# ``datasets`` and ``huggingface_hub`` read these when they are imported: never the network,
# and a cache of their own.
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("HF_HOME", tempfile.mkdtemp(prefix="bf-hf-home-"))

import datasets  # noqa: E402
import pytest  # noqa: E402
from datasets.info import DatasetInfosDict  # noqa: E402
from huggingface_hub import DatasetCard  # noqa: E402

from releases import exports  # noqa: E402
from releases.exports import hf  # noqa: E402

DOCUMENTED = datasets.Features(
    {
        "question_id": datasets.Value("string"),
        "title": datasets.Value("string"),
        "statement": datasets.Value("string"),
        "harness": datasets.Value("string"),
        "entry_point": datasets.Value("string"),
        "starter_code": datasets.Value("string"),
        "time_limit_s": datasets.Value("float64"),
        "memory_mb": datasets.Value("int64"),
        "origin": datasets.Value("string"),
        "difficulty": datasets.Value("string"),
        "tags": datasets.List(datasets.Value("string")),
        "public_tests": datasets.Value("string"),
        "private_tests": datasets.Value("string"),
        "item_hash": datasets.Value("string"),
        "comparison": datasets.Value("string"),
    }
)


@pytest.fixture
def exported(frozen, tmp_path):
    _, release = frozen
    folder = tmp_path / "hf"
    zipfile.ZipFile(io.BytesIO(exports.export_bytes(release, "hf"))).extractall(folder)
    return release, folder


def test_datasets_loads_the_export_with_the_documented_features(exported, tmp_path):
    release, folder = exported
    loaded = datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "cache"))
    assert list(loaded) == ["test"]
    test = loaded["test"]
    assert test.features == DOCUMENTED
    assert test.num_rows == release.item_count
    ids = [i.public_id for i in release.items.order_by("position")]
    assert test["question_id"] == ids
    first = test[0]
    item = release.items.get(public_id=first["question_id"])
    assert first["statement"] == item.record["statement"]
    assert first["time_limit_s"] == pytest.approx(item.record["time_limit_s"])
    hidden = json.loads(first["private_tests"])
    assert [t["input"] for t in hidden] == [
        t.input for t in item.tests.exclude(tier="public").order_by("tier", "ordinal")
    ]


def test_the_card_yaml_declares_features_splits_configs_and_license(exported):
    release, folder = exported
    card = DatasetCard((folder / "README.md").read_text())
    data = card.data.to_dict()
    assert data["license"] == release.benchmark.license
    # The card's dataset_info parses into the same features the loader produced.
    infos = DatasetInfosDict.from_dataset_card_data(card.data)
    (info,) = infos.values()
    assert info.features == DOCUMENTED
    assert info.splits["test"].num_examples == release.item_count
    configs = data["configs"]
    assert configs == [
        {"config_name": "default", "data_files": [{"split": "test", "path": "data/test.parquet"}]}
    ]
    # The JSON lines beside the Parquet hold the same rows.
    lines = (folder / "data" / "test.jsonl").read_text().splitlines()
    parquet = datasets.Dataset.from_parquet(str(folder / "data" / "test.parquet"))
    assert [json.loads(x) for x in lines] == parquet.to_list()


def test_the_parquet_file_alone_carries_the_features(exported):
    _, folder = exported
    # Without the card (e.g. a user copies only the file) datasets still reads the features
    # from the schema metadata instead of guessing them.
    alone = datasets.Dataset.from_parquet(str(folder / "data" / "test.parquet"))
    assert alone.features == DOCUMENTED
    assert [name for name, _ in hf.HF_FEATURES] == list(DOCUMENTED)
