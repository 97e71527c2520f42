# A model renamed (the table, its sequence stays named after the old one,
# the foreign keys pointing to it) and a varchar made text.
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [('replayshop', '0006_drop_sku_check_stock')]

    operations = [
        migrations.RenameModel(old_name='Category', new_name='Section'),
        migrations.AlterField(model_name='product', name='title', field=models.TextField(db_index=True)),
    ]
