from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("sizing", "0011_roles_api_keys"),
    ]

    operations = [
        migrations.AlterField(
            model_name="simulationjob",
            name="kind",
            field=models.CharField(
                choices=[
                    ("simulate", "Simulation at one load"),
                    ("sweep", "Load sweep"),
                    ("slo_search", "Largest load meeting the SLOs"),
                    ("search", "Deployment search"),
                    ("calibrate", "Calibration from measured runs"),
                    ("quote", "Quote: the cheapest deployments meeting the SLOs"),
                ],
                max_length=20,
            ),
        ),
    ]
