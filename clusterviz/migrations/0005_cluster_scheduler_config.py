from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("clusterviz", "0004_cluster_presenter_view"),
    ]

    operations = [
        migrations.AddField(
            model_name="cluster",
            name="scheduler_config",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
