"""Selectors: an organisation's own model shadows the catalog's, on every database (NULL ordering differs)."""

from __future__ import annotations

from sizing.models import LlmModel, Organisation
from sizing.selectors.estimates import model_get_for_organisation


def test_an_organisations_upload_wins_over_the_catalog_model_of_the_same_slug(catalog, organisation):
    # given the organisation's own copy of a catalog model
    own = LlmModel.objects.create(
        slug="meta-llama/Meta-Llama-3-8B", organisation=organisation, config={"model_type": "llama"}, supported=False
    )
    # when
    found = model_get_for_organisation(organisation=organisation, slug="meta-llama/Meta-Llama-3-8B")
    # then
    assert found == own


def test_other_organisations_get_the_catalog_model(catalog, organisation):
    LlmModel.objects.create(
        slug="meta-llama/Meta-Llama-3-8B", organisation=organisation, config={"model_type": "llama"}, supported=False
    )
    other = Organisation.objects.create(name="Other")
    found = model_get_for_organisation(organisation=other, slug="meta-llama/Meta-Llama-3-8B")
    assert found is not None
    assert found.organisation is None


def test_an_unknown_slug_is_none(catalog, organisation):
    assert model_get_for_organisation(organisation=organisation, slug="no/such") is None
