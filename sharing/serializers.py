from rest_framework import serializers

from sharing.models import SharingMode
from studio.serializers import StrictSerializer


class SharingSerializer(StrictSerializer):
    mode = serializers.ChoiceField(choices=SharingMode.choices)
    projectIds = serializers.ListField(child=serializers.IntegerField(min_value=1), required=False, default=list)
