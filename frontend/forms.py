"""What the dashboard's forms share: fields that name the organisation's rows (a deployment by id, a model or a GPU
by slug) cleaned into those rows, or a message under the field when there is none."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext as _

from sizing.estimator.errors import SizingError
from sizing.estimator.versions import parse_version, resolve_engine_version
from sizing.models import Organisation
from sizing.selectors.deployments import deployment_get_for_organisation
from sizing.selectors.estimates import gpu_get, model_get_for_organisation


class OrganisationRowsForm(forms.Form):
    """A form for one organisation: `deployment`, `model` and `gpu` fields (where the form has them) clean to the
    rows, None when empty."""

    def __init__(self, *args: Any, organisation: Organisation, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.organisation = organisation

    def clean_deployment(self) -> Any:
        value = self.cleaned_data.get("deployment")
        if not value:
            return None
        deployment = deployment_get_for_organisation(organisation=self.organisation, deployment_id=value)
        if deployment is None:
            raise forms.ValidationError(_("Unknown deployment %(id)s") % {"id": value})
        return deployment

    def clean_model(self) -> Any:
        slug = self.cleaned_data.get("model") or ""
        if not slug:
            return None
        model = model_get_for_organisation(organisation=self.organisation, slug=slug)
        if model is None:
            raise forms.ValidationError(_("Unknown model %(model)s") % {"model": slug})
        return model

    def clean_gpu(self) -> Any:
        slug = self.cleaned_data.get("gpu") or ""
        if not slug:
            return None
        gpu = gpu_get(slug=slug)
        if gpu is None:
            raise forms.ValidationError(_("Unknown GPU %(gpu)s") % {"gpu": slug})
        return gpu


def _modelled_release(text: str) -> bool:
    """A vLLM release number the rule tables model (an older one, or not a version, is refused by the form)."""
    try:
        resolve_engine_version("vllm", text)
    except SizingError:
        return False
    return parse_version(text) is not None


class SizingVersionForm(forms.Form):
    """The sizing page's engine-release inputs: the vLLM release the estimate holds for (latest by default), the
    usage context and the install. Bound to the page's address, it preselects what the address names and shows
    the message beside a field whose value is not offered."""

    engine_version = forms.ChoiceField(required=False)
    usage_context = forms.ChoiceField(required=False)
    install = forms.ChoiceField(required=False)

    def __init__(
        self,
        *args: Any,
        version_labels: dict[str, str],
        usage_labels: dict[str, str],
        install_labels: dict[str, str],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        choices = list(version_labels.items())
        asked = str(self.data.get("engine_version") or "").strip() if self.is_bound else ""
        if asked and asked not in version_labels and _modelled_release(asked):
            # a release the address names that the select does not list (a boot log's own release): offer it
            choices.insert(1, (asked, asked))
        self.fields["engine_version"].choices = choices
        self.fields["usage_context"].choices = list(usage_labels.items())
        self.fields["install"].choices = list(install_labels.items())

    def selected(self, name: str) -> str:
        """The value the select shows: the address's when offered, else the first choice (the default)."""
        field = self.fields[name]
        default = str(field.choices[0][0])
        if not self.is_bound or name in self.errors:
            return default
        return str(self.cleaned_data.get(name) or default)
