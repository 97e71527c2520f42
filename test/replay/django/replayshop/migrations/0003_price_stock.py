# A type change (numeric(10,2) to numeric(12,2)) and a NOT NULL column
# added with a default that Django drops again at once.
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [('replayshop', '0002_product_sku')]

    operations = [
        migrations.AlterField(
            model_name='product',
            name='price',
            field=models.DecimalField(decimal_places=2, max_digits=12),
        ),
        migrations.AddField(
            model_name='product',
            name='stock',
            field=models.IntegerField(default=0),
        ),
    ]
