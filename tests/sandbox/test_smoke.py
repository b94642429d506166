def test_fresh_shop_starts_with_its_default_data_source(api):
    body = api.get("/data-sources").json()
    assert [d["label"] for d in body["data"]] == ["Default"]
