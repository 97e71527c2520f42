# A column renamed (its index keeps its old name), then a unique_together
# that uses the new name.
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [('replayshop', '0003_price_stock')]

    operations = [
        migrations.RenameField(model_name='product', old_name='name', new_name='title'),
        migrations.AlterUniqueTogether(name='product', unique_together={('category', 'title')}),
    ]
