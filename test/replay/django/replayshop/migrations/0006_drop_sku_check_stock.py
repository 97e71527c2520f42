# A column dropped with its index, and a CHECK constraint.
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [('replayshop', '0005_tags')]

    operations = [
        migrations.RemoveIndex(model_name='product', name='product_sku_idx'),
        migrations.RemoveField(model_name='product', name='sku'),
        migrations.AddConstraint(
            model_name='product',
            constraint=models.CheckConstraint(check=models.Q(stock__gte=0), name='stock_not_negative'),
        ),
    ]
