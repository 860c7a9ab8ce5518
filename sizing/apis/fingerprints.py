"""Thin APIs of environment fingerprints: the probe script to download, and parsing pasted outputs (nothing
stored yet)."""

from __future__ import annotations

from pathlib import Path

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sizing.services.fingerprints import fingerprint_from_texts

PROBE_PATH = Path(__file__).resolve().parents[2] / "deploy" / "tools" / "gpu_probe.sh"
MAX_PIECES = 20


class FingerprintProbeApi(APIView):
    @extend_schema(responses={(200, "text/x-shellscript"): OpenApiResponse(description="the probe script")})
    def get(self, request: Request) -> HttpResponse:
        response = HttpResponse(PROBE_PATH.read_bytes(), content_type="text/x-shellscript; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="gpu_probe.sh"'
        return response


class FingerprintParseApi(APIView):
    class FingerprintParseInputSerializer(serializers.Serializer):
        texts = serializers.ListField(
            child=serializers.CharField(trim_whitespace=False, max_length=4 * 2**20),
            min_length=1,
            max_length=MAX_PIECES,
            help_text="raw outputs of one machine (nvidia-smi, topo -m, versions) or a probe file's content",
        )

    @extend_schema(
        request=FingerprintParseInputSerializer, responses={200: OpenApiResponse(description="the merged fingerprint")}
    )
    def post(self, request: Request) -> Response:
        serializer = self.FingerprintParseInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return Response(fingerprint_from_texts(texts=serializer.validated_data["texts"]), status=status.HTTP_200_OK)
