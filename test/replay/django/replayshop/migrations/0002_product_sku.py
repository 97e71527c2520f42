# A nullable column and a named index on it.
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [('replayshop', '0001_initial')]

    operations = [
        migrations.AddField(
            model_name='product',
            name='sku',
            field=models.CharField(max_length=32, null=True),
        ),
        migrations.AddIndex(
            model_name='product',
            index=models.Index(fields=['sku'], name='product_sku_idx'),
        ),
    ]
