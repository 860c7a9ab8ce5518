"""Server-rendered pages of the organisation's customers. A customer is not a row of its own: it is the `customer`
name of the organisation's deployments (the distinct non-empty names), so another organisation's customer of the
same name is never seen. /customers/ lists them with their deployments and newest signed report;
/customers/<name>/ shows one customer's deployments, each with how much of its commitment checklist is done."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views import View

from reports.checklist import checklist_summary, commitment_checklist
from reports.models import ReportVersion
from sizing.models import Organisation
from sizing.selectors.deployments import deployment_list_for_organisation
from sizing.services.estimates import organisation_for_user


def _newest_signed(organisation: Organisation) -> dict[str, ReportVersion]:
    """Customer name → the newest signed report version of its deployments."""
    versions = (
        ReportVersion.objects.filter(
            status=ReportVersion.Status.SIGNED,
            report__organisation=organisation,
            report__deployment__organisation=organisation,
        )
        .exclude(report__deployment__customer="")
        .select_related("report", "report__deployment")
        .defer("pdf", "content")
        .order_by("-signed_at", "-pk")
    )
    newest: dict[str, ReportVersion] = {}
    for version in versions:
        newest.setdefault(version.report.deployment.customer, version)
    return newest


class CustomerListPageView(LoginRequiredMixin, View):
    template_name = "frontend/customers.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        organisation = organisation_for_user(user=request.user)
        customers: dict[str, list[Any]] = {}
        for deployment in deployment_list_for_organisation(organisation=organisation).exclude(customer=""):
            customers.setdefault(deployment.customer, []).append(deployment)
        signed = _newest_signed(organisation)
        rows = [
            {
                "name": name,
                "deployments": sorted(deployments, key=lambda d: d.name),
                "count": len(deployments),
                "signed": signed.get(name),
            }
            for name, deployments in sorted(customers.items(), key=lambda item: item[0].casefold())
        ]
        return render(request, self.template_name, {"rows": rows})


class CustomerDetailPageView(LoginRequiredMixin, View):
    template_name = "frontend/customer_detail.html"

    def get(self, request: HttpRequest, name: str) -> HttpResponse:
        organisation = organisation_for_user(user=request.user)
        deployments = (
            list(
                deployment_list_for_organisation(organisation=organisation).filter(customer=name).order_by("name", "pk")
            )
            if name
            else []
        )
        if not deployments:
            raise Http404(_("No such customer"))
        rows = []
        for deployment in deployments:
            items = commitment_checklist(deployment)
            rows.append(
                {
                    "deployment": deployment,
                    "summary": checklist_summary(items),
                    "missing": [item["text"] for item in items if not item["done"]],
                }
            )
        return render(
            request, self.template_name, {"name": name, "rows": rows, "signed": _newest_signed(organisation).get(name)}
        )
