# A new model and a many-to-many field: Django creates the through table
# with two foreign keys and a unique pair.
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [('replayshop', '0004_rename_title')]

    operations = [
        migrations.CreateModel(
            name='Tag',
            fields=[
                ('id', models.AutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('label', models.SlugField(max_length=50, unique=True)),
            ],
        ),
        migrations.AddField(
            model_name='product',
            name='tags',
            field=models.ManyToManyField(blank=True, to='replayshop.Tag'),
        ),
    ]
