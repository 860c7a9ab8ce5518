"""Pages show only the links and buttons the user's role allows (sizing/kernel/access.py decides; the server refuses
the rest anyway).

    {% load access %}
    {% if request.user|may_read:"frontend:endpoints" %}<a href="...">...</a>{% endif %}
    {% if request.user|may_write:"frontend:report-version-approve" %}<form method="post" ...>{% endif %}
"""

from typing import Any

from django import template

from sizing.kernel.access import may_name

register = template.Library()


@register.filter
def may_read(user: Any, url_name: str) -> bool:
    return may_name(user, url_name, "GET")


@register.filter
def may_write(user: Any, url_name: str) -> bool:
    return may_name(user, url_name, "POST")
