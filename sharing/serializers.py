from rest_framework import serializers

from sharing.models import SharingMode
from studio.serializers import StrictSerializer

MAX_ID = 2**63 - 1  # a bigint primary key; a larger id reaches the database's `IN (...)` and fails there (a 500)


class SharingSerializer(StrictSerializer):
    mode = serializers.ChoiceField(choices=SharingMode.choices)
    projectIds = serializers.ListField(child=serializers.IntegerField(min_value=1, max_value=MAX_ID), required=False,
                                       default=list)
